"""Port a PyTorch file to MindSpore (`lsp-check port`), convert its weights
(`lsp-check convert-weights`). The port runs on libcst in a child process (`child.py`): a
file that crashes libcst's native parser ends that process, never the language server or
`lsp-check`, and neither of them imports libcst.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from .child import port_in_child
from .errors import INSTALL_HINT, TOO_DEEP, PortError, PortUnavailable
from .nesting import too_deep
from .port_result import PortResult

PORT_SUFFIX = "_mindspore"
__all__ = ["INSTALL_HINT", "PORT_SUFFIX", "PortError", "PortUnavailable", "default_port_path", "libcst_installed",
           "port_source"]


def port_source(text: str, path: str = "<source>") -> PortResult:
    """The MindSpore port of `text`, with what was converted and what needs a person.
    Raises PortUnavailable without libcst, PortError when the port cannot be made."""
    if not libcst_installed():
        raise PortUnavailable(INSTALL_HINT)
    if too_deep(text):
        raise PortError(TOO_DEEP)
    return port_in_child(text, path)


def libcst_installed() -> bool:
    """Without importing it (nothing but the port's child process imports libcst)."""
    try:
        return importlib.util.find_spec("libcst") is not None
    except (ImportError, ValueError):  # ValueError: blocked in sys.modules
        return False


def default_port_path(source: str | os.PathLike) -> Path:
    """Where a port goes unless told: beside the source, `model.py` → `model_mindspore.py`."""
    path = Path(source)
    return path.with_name(f"{path.stem}{PORT_SUFFIX}{path.suffix or '.py'}")
