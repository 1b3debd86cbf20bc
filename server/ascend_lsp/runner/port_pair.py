"""The mindspore target's counterpart in a ported file (`lsp-check port`): the function of the
same name in the port, given with `--port` or found beside the source as `<name>_mindspore.py`.

The worker loads the torch run's weights into the port's cells by the rules of
mappings/mindspore/weights.toml, the ones `lsp-check convert-weights` applies to a .pth.
"""

from __future__ import annotations

from pathlib import Path

from ..port import default_port_path
from ..source_codec import read_source
from ..sources import SourceError
from .targets import extract_targets


class PortPairError(ValueError):
    """The port named cannot be read, or lacks the function."""


def port_file(source: str, explicit: str | None, has_in_file_pair: bool) -> Path | None:
    """The port to pair with: `explicit`, else the default beside the source unless the
    source pairs the function itself (`<function>_ms` or a mindspore-pair marker)."""
    if explicit:
        return Path(explicit)
    default = default_port_path(source)
    return default if not has_in_file_pair and default.is_file() else None


def port_options(path: Path, function: str) -> dict:
    """The wire form of the port for the worker: its text, and the function that pairs."""
    try:
        text = read_source(str(path)).text  # as lsp-check reads files: never a FIFO or device
    except SourceError as exc:
        raise PortPairError(f"cannot read the port {path}: {exc}") from None
    if function not in {name for name, _ in extract_targets(text)}:
        raise PortPairError(f"the port {path} has no top-level {function}() that runs without arguments")
    return {"path": str(path), "text": text, "module": path.stem}
