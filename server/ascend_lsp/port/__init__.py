"""Port a PyTorch file to MindSpore (`lsp-check port`), convert its weights
(`lsp-check convert-weights`). libcst is imported here only, when a port is asked for:
never on the linting path or at server start.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .rewrite import PortResult

PORT_SUFFIX = "_mindspore"
INSTALL_HINT = "porting needs libcst: pip install 'ascend-lsp[port]' (or pip install libcst)"


class PortUnavailable(Exception):
    """libcst is not installed."""


def port_source(text: str, path: str = "<source>") -> "PortResult":
    """The MindSpore port of `text`, with what was converted and what needs a person.
    Raises PortUnavailable without libcst, libcst's ParserSyntaxError on a file that does not parse."""
    try:
        from .rewrite import port
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] == "libcst":
            raise PortUnavailable(INSTALL_HINT) from None
        raise
    return port(text, path)


def default_port_path(source: str | os.PathLike) -> Path:
    """Where a port goes unless told: beside the source, `model.py` → `model_mindspore.py`."""
    path = Path(source)
    return path.with_name(f"{path.stem}{PORT_SUFFIX}{path.suffix or '.py'}")
