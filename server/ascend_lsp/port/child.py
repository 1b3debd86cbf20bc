"""The port runs in a child process. libcst's parser is native code: a deeply nested file
crashes it (SIGSEGV) or exhausts it (RecursionError, MemoryError), and in a child that end is
an answer with a reason, not a dead language server or `lsp-check`.

The child is `python -I` (neither the current folder, PYTHONPATH nor the user's site folder
on its path), started from the root folder, so no module of the workspace can be imported:
it finds this package in the folder passed to it. The text goes in on stdin, the result
comes back as JSON on stdout; the child's time and memory are bounded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from ..limits import address_space
from .errors import INSTALL_HINT, TOO_DEEP, PortError, PortUnavailable
from .port_result import PortItem, PortResult

TIMEOUT_S = 120
MEMORY_LIMIT_MB = 4096
BOOTSTRAP = "import sys; sys.path.insert(0, sys.argv[1]); from ascend_lsp.port.child import main; main()"
PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


def port_in_child(text: str, path: str) -> PortResult:
    """The port of `text`, made by a child process. Raises PortError with the reason when
    the child gives up, crashes or runs out of time, PortUnavailable without libcst."""
    request = json.dumps({"text": text, "path": path, "memory_limit_mb": MEMORY_LIMIT_MB}).encode()
    try:
        done = subprocess.run([sys.executable, "-I", "-c", BOOTSTRAP, PACKAGE_PARENT], input=request,
                              capture_output=True, timeout=TIMEOUT_S, cwd=os.path.abspath(os.sep))
    except subprocess.TimeoutExpired:
        raise PortError(f"the port took longer than {TIMEOUT_S} s and was stopped") from None
    except OSError as exc:
        raise PortError(f"cannot start the port's process: {exc}") from None
    stderr = done.stderr.decode("utf-8", "replace").strip()
    last = stderr.splitlines()[-1] if stderr else ""
    if done.returncode < 0:
        if "memory allocation of" in stderr:  # libcst's native code aborts when an allocation fails
            raise PortError(_out_of_memory(MEMORY_LIMIT_MB))
        raise PortError(f"the port crashed ({_signal_name(-done.returncode)}) in libcst"
                        + (f": {last}" if last else ""))
    answer = _answer(done.stdout) if done.returncode == 0 else None
    if answer is None:
        raise PortError(f"the port failed (exit status {done.returncode}): {last or 'no answer'}. This is a bug in "
                        f"ascend-lsp: please report it with this traceback:\n{stderr}")
    if "unavailable" in answer:
        raise PortUnavailable(answer["unavailable"])
    if "error" in answer:
        raise PortError(answer["error"])
    return PortResult(answer["path"], answer["text"], [PortItem(**item) for item in answer["items"]])


def _answer(stdout: bytes) -> dict | None:
    try:
        answer = json.loads(stdout)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def _out_of_memory(limit_mb: int) -> str:
    return f"the port needs more than its {limit_mb} MiB of memory"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def main() -> None:
    """The child: a request on stdin, the answer on stdout."""
    request = json.loads(sys.stdin.buffer.read())
    _limit_memory(request["memory_limit_mb"])
    sys.stdout.write(json.dumps(_port(request["text"], request["path"], request["memory_limit_mb"])))


def _port(text: str, path: str, memory_limit_mb: int) -> dict:
    try:
        from libcst import ParserSyntaxError

        from .rewrite import port
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] == "libcst":
            return {"unavailable": INSTALL_HINT}
        raise
    try:
        result = port(text, path)
    except RecursionError:
        return {"error": TOO_DEEP}
    except MemoryError:
        return {"error": _out_of_memory(memory_limit_mb)}
    except ParserSyntaxError as exc:
        return {"error": f"does not parse: {exc}"}
    return {"path": result.path, "text": result.text, "items": [item.to_dict() for item in result.items]}


def _limit_memory(limit_mb: int) -> None:
    limits = address_space(limit_mb)
    if limits is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, limits)
