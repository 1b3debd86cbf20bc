"""Warm worker processes, one per (launcher, target), and `run()` that never raises.

Used from the language server's worker threads and from the CLI; imports neither torch
nor numpy nor mindspore. Each worker lives in its own session (process group), so a
timeout or a cancel kills everything it started; a crashed or killed worker is replaced
by a fresh one on the next run.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import resource
import signal
import subprocess
import sys
import threading
import time
from typing import Callable

from ..limits import address_space
from .command import Launch, local_launch, template_launch, worker_source_line
from .job import Job, JobError
from .remote_host import explain_missing_project_module
from .result import RunResult, failed, from_worker

POLL_S = 0.05
_EOF = object()


class WorkerProcess:
    """One worker: a process, a reader thread turning its stdout lines into messages, and
    a drain thread keeping the tail of its stderr (for crash reports)."""

    def __init__(self, launch: Launch, memory_limit_mb: int | None):
        self.launch = launch
        self.messages: queue.Queue = queue.Queue()
        self.stderr_tail: collections.deque[bytes] = collections.deque(maxlen=64)
        self.hello: dict | None = None
        preexec = _memory_limiter(memory_limit_mb) if launch.local and memory_limit_mb else None
        self.process = subprocess.Popen(
            launch.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, preexec_fn=preexec)
        threading.Thread(target=self._read, daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()
        if launch.ships_source:
            self.send_raw(worker_source_line())

    def _read(self) -> None:
        for line in self.process.stdout:
            try:
                self.messages.put(json.loads(line))
            except ValueError:
                self.stderr_tail.append(b"[stdout] " + line)
        self.messages.put(_EOF)

    def _drain(self) -> None:
        for line in self.process.stderr:
            self.stderr_tail.append(line)

    def send_raw(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def exit_description(self) -> str:
        try:
            code = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            return "the worker closed its output"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker crashed ({name})"
        return f"the worker exited with code {code}"

    def stderr_text(self, limit: int = 1500) -> str:
        # stdout can close before the last stderr lines are drained; give the drain a
        # moment (a grandchild holding stderr open must not hang the report).
        self._drainer.join(timeout=1)
        return b"".join(self.stderr_tail).decode("utf-8", "replace")[-limit:].strip()


class RunnerPool:
    """Keeps one warm worker per (launcher, target, fallback flag); thread-safe.

    Runs on the same worker are serialised; runs on different workers proceed in parallel.
    """

    def __init__(self, default_interpreter: str | None = None):
        self.default_interpreter = default_interpreter or sys.executable
        self._workers: dict[tuple, WorkerProcess] = {}
        self._locks: dict[tuple, threading.Lock] = {}
        self._lock = threading.Lock()

    def run(self, job: Job, cancel: threading.Event | None = None,
            on_progress: Callable[[str], None] | None = None) -> RunResult:
        """Run `job`; always returns a RunResult (status failed with a message on any failure)."""
        started = time.monotonic()
        try:
            wire = job.to_wire()
            launch = template_launch(job.command) if job.command else local_launch(
                job.interpreter or self.default_interpreter)
        except (JobError, ValueError) as exc:
            return failed(job, "bad-job", str(exc))
        key = (launch.argv, job.target, job.fallback_cpu_disable)
        with self._lock:
            slot = self._locks.setdefault(key, threading.Lock())
        try:
            with slot:
                result = self._run_on(key, launch, job, wire, started, cancel, on_progress)
        except Exception as exc:  # never take the caller down
            self._discard(key)
            return failed(job, "internal", f"runner error: {type(exc).__name__}: {exc}")
        return result if launch.local else explain_missing_project_module(job, result)

    def _run_on(self, key, launch: Launch, job: Job, wire: dict, started: float, cancel, on_progress) -> RunResult:
        deadline = started + job.timeout
        worker = self._workers.get(key)
        if worker is None or not worker.alive():
            self._discard(key)
            try:
                worker = WorkerProcess(launch, job.memory_limit_mb)
            except OSError as exc:
                return failed(job, "cannot-start", f"cannot start the worker ({launch.describe()}): {exc}")
            self._workers[key] = worker
        try:
            worker.send_raw((json.dumps(wire) + "\n").encode())
        except OSError:
            return self._dead(key, worker, job)
        while True:
            if cancel is not None and cancel.is_set():
                self._discard(key)
                return failed(job, "cancelled", "cancelled; the worker was stopped")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._discard(key)
                if worker.hello is None:
                    return failed(job, "no-answer", f"the worker command did not answer within {job.timeout:g} s "
                                                    f"({launch.describe()})")
                return failed(job, "timeout", f"timed out after {job.timeout:g} s; the worker was killed")
            try:
                message = worker.messages.get(timeout=min(POLL_S, remaining))
            except queue.Empty:
                continue
            if message is _EOF:
                return self._dead(key, worker, job)
            kind = message.get("type")
            if kind == "hello":
                worker.hello = message
                if message.get("protocol") != wire["protocol"]:
                    self._discard(key)
                    return failed(job, "protocol", f"worker speaks protocol {message.get('protocol')}, "
                                                   f"this client {wire['protocol']}")
            elif kind == "progress" and message.get("id") == wire["id"]:
                if on_progress is not None:
                    try:
                        on_progress(message.get("message", ""))
                    except Exception:
                        pass  # a broken progress sink must not lose the result
            elif kind == "result" and message.get("id") == wire["id"]:
                result = from_worker(job, message, round(time.monotonic() - started, 4))
                if result.code == "exception" and result.error and result.error.get("type") == "MemoryError":
                    self._discard(key)  # a worker that hit its memory limit is not worth keeping warm
                return result

    def _dead(self, key, worker: WorkerProcess, job: Job) -> RunResult:
        how = worker.exit_description()
        stderr = worker.stderr_text()
        self._discard(key)
        before = "" if worker.hello else " before answering"
        limit = f" (memory limit {job.memory_limit_mb} MiB)" if "SIGKILL" in how or "SIGABRT" in how else ""
        message = f"{how}{before}{limit}" + (f": {stderr.splitlines()[-1]}" if stderr else "")
        return failed(job, "crashed", message, error={"type": "WorkerExit", "message": how, "traceback": stderr,
                                                      "frames": [], "user_line": None, "side": None})

    def _discard(self, key) -> None:
        worker = self._workers.pop(key, None)
        if worker is not None:
            worker.kill()

    def close(self) -> None:
        with self._lock:
            for key in list(self._workers):
                self._discard(key)

    def __enter__(self) -> "RunnerPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _memory_limiter(limit_mb: int):
    # Everything but the setrlimit call happens here in the parent: between fork and exec
    # the child must not import or take locks another thread may hold.
    limits = address_space(limit_mb)
    if limits is None:
        return None

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, limits)
    return limit
