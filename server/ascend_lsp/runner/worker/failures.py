"""Why a run has no result: the target cannot run here (SetupError) or the user's code raised
(SnippetError), with its traceback mapped to the user's file."""

from __future__ import annotations

import sys
import traceback

_SELF_FILE = sys._getframe().f_code.co_filename  # the script's name, "<ascend-lsp worker>", when bundled


class SetupError(Exception):
    """The target cannot run here (missing package or device); `code` names the case."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class SnippetError(Exception):
    """The user's code raised; carries the traceback mapped to the user's file."""

    def __init__(self, side: str, error: dict):
        super().__init__(error["message"])
        self.side = side
        self.error = error


def failure(code: str, message: str, **extra) -> dict:
    return {"status": "failed", "code": code, "message": message, **extra}


def import_required(module: str, package: str):
    try:
        return __import__(module)
    except ImportError as exc:
        raise SetupError("missing-package", f"{package} is not importable in {sys.executable}: {exc}") from None


def syntax_error(exc: SyntaxError) -> dict:
    return {"type": "SyntaxError", "message": str(exc.msg), "user_line": exc.lineno,
            "traceback": "".join(traceback.format_exception_only(type(exc), exc)),
            "frames": [{"file": exc.filename, "line": exc.lineno, "function": "<module>", "text": exc.text or ""}]}


def mapped_error(exc: BaseException, path: str, memory_limit_mb) -> dict:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != _SELF_FILE]
    user = [f for f in frames if f.filename == path]
    message = str(exc)
    if isinstance(exc, MemoryError) or "can't allocate memory" in message or "not enough memory" in message:
        message = f"{message or 'out of memory'} (worker memory limit {memory_limit_mb} MiB)"
    text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + \
        "".join(traceback.format_exception_only(type(exc), exc))
    return {"type": type(exc).__name__, "message": message, "traceback": text,
            "user_line": user[-1].lineno if user else None,
            "frames": [{"file": f.filename, "line": f.lineno, "function": f.name, "text": f.line or ""}
                       for f in frames]}
