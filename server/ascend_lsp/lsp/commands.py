"""Commands (`workspace/executeCommand`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer

DEBUG_MODULES = "ascend-lsp.debugModules"


def register(server: AscendLanguageServer) -> None:
    @server.command(DEBUG_MODULES)
    def debug_modules(*_args) -> dict:
        """A diagnostics aid: the top-level modules this server process has imported (it
        must never import torch, torch_npu or mindspore), and its pid."""
        return {"pid": os.getpid(), "modules": sorted({name.partition(".")[0] for name in list(sys.modules)})}
