"""Every way a run can go wrong gives a clear failed RunResult; the pool recovers."""

import shlex
import sys
import threading
import time

import pytest

from ascend_lsp.runner import Job, RunnerPool

pytestmark = pytest.mark.torch
pytest.importorskip("torch", reason="torch is not installed")

FAILURES = """
import os
import time

def hang():
    while True:
        time.sleep(0.01)

def exit_hard():
    os._exit(3)

def segfault():
    import ctypes
    ctypes.string_at(0)

def hog():
    blocks = []
    while True:
        blocks.append(bytearray(256 * 2**20))

def fine():
    return 1.0
"""


def test_hang_times_out_and_the_worker_is_replaced(pool, snippet):
    pool.run(snippet(FAILURES, "fine", target="cpu"))  # warm, so the timeout measures the hang
    started = time.monotonic()
    result = pool.run(snippet(FAILURES, "hang", target="cpu", timeout=2))
    assert result.status == "failed" and result.code == "timeout"
    assert result.message == "timed out after 2 s; the worker was killed"
    assert time.monotonic() - started < 10
    assert pool.run(snippet(FAILURES, "fine", target="cpu")).status == "passed"


def test_cancel_stops_the_worker(pool, snippet):
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    result = pool.run(snippet(FAILURES, "hang", target="cpu", timeout=60), cancel=cancel)
    assert result.code == "cancelled"


def test_os_exit_is_a_crash_result(pool, snippet):
    result = pool.run(snippet(FAILURES, "exit_hard", target="cpu"))
    assert result.code == "crashed"
    assert result.message.startswith("the worker exited with code 3")


def test_segfault_is_a_crash_result(pool, snippet):
    result = pool.run(snippet(FAILURES, "segfault", target="cpu"))
    assert result.code == "crashed"
    assert result.message.startswith("the worker crashed (SIGSEGV)")
    assert pool.run(snippet(FAILURES, "fine", target="cpu")).status == "passed"


def test_memory_hog_hits_the_limit(pool, snippet):
    result = pool.run(snippet(FAILURES, "hog", target="cpu", memory_limit_mb=2048))
    assert result.status == "failed"
    assert "memory limit 2048 MiB" in result.message


def test_nonexistent_command(snippet):
    with RunnerPool() as pool:
        result = pool.run(snippet(FAILURES, "fine", target="cpu", command="/nonexistent/python -c {bootstrap}"))
    assert result.code == "cannot-start"
    assert "No such file or directory" in result.message


def test_command_that_exits_before_answering(snippet):
    with RunnerPool() as pool:
        result = pool.run(snippet(FAILURES, "fine", target="cpu", command="sh -c 'echo host unreachable >&2; exit 255'"))
    assert result.code == "crashed"
    assert result.message == "the worker exited with code 255 before answering: host unreachable"


def test_command_that_never_answers(snippet):
    with RunnerPool() as pool:
        started = time.monotonic()
        result = pool.run(snippet(FAILURES, "fine", target="cpu", command="sleep 30", timeout=1.5))
    assert result.code == "no-answer"
    assert result.message == "the worker command did not answer within 1.5 s (sleep 30)"
    assert time.monotonic() - started < 5


def test_shell_template_ships_the_worker_like_ssh_would(snippet):
    # `sh -c` stands in for ssh: the remote side gets one shell command line to parse.
    template = f"sh -c {shlex.quote(f'exec {shlex.quote(sys.executable)} -c ' + '{bootstrap_quoted}')}"
    with RunnerPool() as pool:
        result = pool.run(snippet(FAILURES, "fine", target="cpu", command=template))
    assert result.status == "passed", result.message


def test_bad_jobs_are_results_not_exceptions(pool, tmp_path):
    assert pool.run(Job(path=str(tmp_path / "missing.py"), function="f", target="cpu")).code == "bad-job"
    assert pool.run(Job(path=__file__, function="f", target="tpu")).code == "bad-job"
    needs_args = tmp_path / "args.py"
    needs_args.write_text("def f(x):\n    return x\n")
    result = pool.run(Job(path=str(needs_args), function="f", target="cpu"))
    assert result.code == "bad-job" and "needs arguments (x)" in result.message
