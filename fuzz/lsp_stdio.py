"""A bare JSON-RPC client for the language server over stdio: sends any bytes (malformed
messages included), answers the server's own requests, and waits for responses by id.
Used by the invalid-params tests and the server fuzz campaign."""

from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any


class ServerGone(Exception):
    pass


class LspProcess:
    def __init__(self, root: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "ascend_lsp.lsp.server"], cwd=root,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        self.ids = itertools.count(1)
        self.responses: dict[Any, queue.Queue] = {}
        self.notifications: list[dict] = []
        self.lock = threading.Lock()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    # --- sending -------------------------------------------------------------------------
    def send_bytes(self, body: bytes) -> None:
        try:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()
        except (OSError, ValueError) as exc:  # a closed pipe
            raise ServerGone(str(exc)) from None

    def send(self, message: dict) -> None:
        self.send_bytes(json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8"))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, **({} if params is None else {"params": params})})

    def request_async(self, method: str, params: Any = None, **extra: Any) -> queue.Queue:
        """Send a request; the queue gets its response. `extra` may replace the id or drop params."""
        msg_id = extra.pop("id", next(self.ids))
        box: queue.Queue = queue.Queue(maxsize=1)
        with self.lock:
            self.responses[json.dumps(msg_id)] = box
        message = {"id": msg_id, "method": method, **({} if params is None else {"params": params}), **extra}
        self.send(message)
        return box

    def request(self, method: str, params: Any = None, timeout: float = 30.0, **extra: Any) -> dict:
        """The response message (with "result" or "error"); TimeoutError if none came."""
        box = self.request_async(method, params, **extra)
        try:
            return box.get(timeout=timeout)
        except queue.Empty:
            if self.proc.poll() is not None:
                raise ServerGone(f"exit code {self.proc.returncode}") from None
            raise TimeoutError(f"no answer to {method}") from None

    # --- receiving -----------------------------------------------------------------------
    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(stream.read(length or 0))
            if "method" in message and "id" in message:  # the server asks the client
                self.send({"id": message["id"], "result": _answer(message)})
            elif "method" in message:
                self.notifications.append(message)
            else:
                with self.lock:
                    box = self.responses.pop(json.dumps(message.get("id")), None)
                if box is not None:
                    box.put(message)

    # --- session -------------------------------------------------------------------------
    def initialize(self, root_uri: str, encoding: str = "utf-16", pull: bool = True, create_files: bool = False) -> dict:
        caps: dict = {"general": {"positionEncodings": [encoding]}, "workspace": {"configuration": True}}
        if create_files:  # workspace edits that create files (the port action's)
            caps["workspace"]["workspaceEdit"] = {"documentChanges": True, "resourceOperations": ["create"]}
        if pull:
            caps["textDocument"] = {"diagnostic": {"dynamicRegistration": False}}
        result = self.request("initialize", {"processId": os.getpid(), "rootUri": root_uri, "capabilities": caps})
        self.notify("initialized", {})
        return result

    def close(self, timeout: float = 10.0) -> int | None:
        """Shutdown and exit; the exit code, or None if the server had to be killed."""
        if self.proc.poll() is not None:
            return self.proc.returncode
        try:
            self.request("shutdown", timeout=timeout)
            self.notify("exit")
            return self.proc.wait(timeout=timeout)
        except (ServerGone, TimeoutError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass


def _answer(request: dict) -> Any:
    if request["method"] == "workspace/configuration":
        return [None] * len(request.get("params", {}).get("items", []))
    return None
