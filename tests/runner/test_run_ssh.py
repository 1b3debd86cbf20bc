"""The remote target through a real sshd on localhost: Debian's openssh-server with a host key,
a client key and a config of the test's own (a temp folder; no system file changes).

The login is the user running the tests: root (as in CI) with `PermitRootLogin prohibit-password`,
so that no account is created; sshd runs a command in that user's shell as a non-login shell, as
on a real host. Running as root, sshd needs its privilege-separation folder /run/sshd, which
Debian's service start creates and the test creates the same way when it is missing.
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from ascend_lsp.runner import Job, RunnerPool
from ascend_lsp.runner.remote_host import project_module

SSHD = "/usr/sbin/sshd"
DEBIAN_PYTHON = "/usr/bin/python3"  # Debian's own: no torch


class Sshd:
    """One sshd on a free loopback port, and the template that reaches it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.user = pwd.getpwuid(os.getuid()).pw_name
        for name in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True)
        shutil.copy(folder / "client_key.pub", folder / "authorized_keys")
        self.port = _free_port()
        host_key = (folder / "host_key.pub").read_text().split()[:2]
        (folder / "known_hosts").write_text(f"[127.0.0.1]:{self.port} {' '.join(host_key)}\n")
        (folder / "sshd_config").write_text(textwrap.dedent(f"""\
            ListenAddress 127.0.0.1:{self.port}
            HostKey {folder / "host_key"}
            AuthorizedKeysFile {folder / "authorized_keys"}
            PermitRootLogin prohibit-password
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            UsePAM no
            StrictModes no
            PidFile none
            """))
        if os.getuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        with open(folder / "sshd.log", "wb") as log:
            self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", str(folder / "sshd_config")],
                                            stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 10
        while not _listening(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.skip(f"sshd did not start: {(folder / 'sshd.log').read_text().strip()[-300:]}")
            time.sleep(0.05)

    def template(self, remote_command: str) -> str:
        """`ssh ... user@127.0.0.1 REMOTE_COMMAND`, with the options docs/remote.md recommends."""
        return (f"ssh -p {self.port} -i {self.folder / 'client_key'} -o BatchMode=yes "
                f"-o UserKnownHostsFile={self.folder / 'known_hosts'} -o StrictHostKeyChecking=yes "
                f"-o ConnectTimeout=5 -o ServerAliveInterval=1 -o ServerAliveCountMax=3 "
                f"{self.user}@127.0.0.1 {remote_command}")

    def processes(self) -> list[int]:
        """sshd itself and every process it started: the sessions and the commands they run."""
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                children.setdefault(parent, []).append(int(entry.name))
        found, todo = [], [self.process.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo += children.get(pid, [])
        return found

    def kill_sshd(self) -> None:
        """Drop every connection: kill sshd and its session processes, not the commands they run."""
        for pid in self.processes():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "sshd":
                    os.kill(pid, signal.SIGKILL)
            except (OSError, ProcessLookupError):
                pass

    def stop(self) -> None:
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(timeout=5)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def sshd(tmp_path):
    if not os.access(SSHD, os.X_OK) or not shutil.which("ssh") or not shutil.which("ssh-keygen"):
        pytest.skip("openssh-server and openssh-client are not installed (apt-get install openssh-server)")
    folder = tmp_path / "ssh"
    folder.mkdir()
    server = Sshd(folder)
    yield server
    server.stop()


def project(tmp_path: Path) -> Path:
    """A project whose file imports a module of its own and reads a file by a relative path."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "blocks.py").write_text("import torch\n\n\ndef block():\n    return torch.nn.Linear(4, 3)\n")
    (root / "scale.txt").write_text("2.5\n")
    (root / "model.py").write_text(textwrap.dedent("""\
        import os
        import time

        import torch
        from blocks import block


        def forward():
            torch.manual_seed(0)
            scale = float(open("scale.txt").read())
            return block()(torch.ones(2, 4)) * scale


        def wait_for_stop():
            deadline = time.monotonic() + 60
            while not os.path.exists("stop") and time.monotonic() < deadline:
                time.sleep(0.05)
            return torch.ones(1)
        """))
    return root


def job(root: Path, function: str, **options) -> Job:
    return Job(path=str(root / "model.py"), function=function, target="cpu", cwd=str(root),
               **{"timeout": 60.0, **options})


def worker(remote_python: str = sys.executable) -> str:
    return f"{shlex.quote(remote_python)} -c {{bootstrap_quoted}}"


def ancestors(pid: int) -> list[str]:
    names = []
    while pid > 1:
        status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if ":\t" in line)
        names.append(status["Name"].strip())
        pid = int(status["PPid"])
    return names


def test_the_worker_ships_over_ssh_and_runs_the_project(sshd, tmp_path):
    # As docs/remote.md says for CANN's set_env.sh: the non-login shell reads no profile, so the
    # template sources the environment, here one that puts this venv's python3 first on PATH.
    root = project(tmp_path)
    environment = tmp_path / "set_env.sh"
    environment.write_text(f"export PATH={shlex.quote(os.path.dirname(sys.executable))}:$PATH\n")
    with RunnerPool() as pool:
        result = pool.run(job(root, "forward", command=sshd.template(f". {environment} && python3 -c "
                                                                     f"{{bootstrap_quoted}}")))
        assert result.status == "passed", result.message
        assert [o.path for o in result.outputs] == ["out"]
        assert result.outputs[0].reference["shape"] == [2, 3]
        # The warm worker is sshd's: its parent is the session sshd started, not this process.
        pid = result.worker["pid"]
        chain = ancestors(pid)
        assert chain[0].startswith("python")
        assert "sshd" in chain[1:] and pid in sshd.processes()


def test_a_host_without_the_project_is_told_so(sshd, tmp_path):
    # The host sees the project folder empty: a mount namespace with a tmpfs over it.
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -m is not permitted here: a host without the project cannot be made")
    root = project(tmp_path)
    hide = tmp_path / "hide.sh"
    hide.write_text('#!/bin/sh\nmount -t tmpfs none "$1" && shift && exec "$@"\n')
    hide.chmod(0o755)
    command = sshd.template(f"unshare -m {hide} {root} {worker()}")
    with RunnerPool() as pool:
        result = pool.run(job(root, "forward", command=command))
    assert result.code == "exception"
    assert result.message == (
        f"reference run raised ModuleNotFoundError: No module named 'blocks': blocks is this project's "
        f"({root / 'blocks.py'}), and the host that runs the worker has no such file at that path; a worker "
        f"started by a command template gets this file's text only, so the host needs the project at the same "
        f"path ({root})")
    assert result.line == 5  # the import, in the user's file


def test_a_remote_python_without_torch(sshd, tmp_path):
    check = subprocess.run([DEBIAN_PYTHON, "-c", "import torch"], capture_output=True) \
        if os.access(DEBIAN_PYTHON, os.X_OK) else None
    if check is None or check.returncode == 0:
        pytest.skip(f"{DEBIAN_PYTHON} is absent or has torch: no Python without torch to point at")
    started = time.monotonic()
    with RunnerPool() as pool:
        result = pool.run(job(project(tmp_path), "forward", command=sshd.template(worker(DEBIAN_PYTHON))))
    assert result.code == "missing-package"
    assert result.message == f"torch is not importable in {DEBIAN_PYTHON}: No module named 'torch'"
    assert time.monotonic() - started < 20


def test_a_dropped_connection_is_a_result_not_a_hang(sshd, tmp_path):
    root = project(tmp_path)
    running = threading.Event()
    started = time.monotonic()
    with RunnerPool() as pool:
        killer = threading.Thread(target=lambda: running.wait(30) and sshd.kill_sshd())
        killer.start()
        try:
            result = pool.run(job(root, "wait_for_stop", command=sshd.template(worker())),
                              on_progress=lambda message: message.startswith("reference") and running.set())
        finally:
            (root / "stop").write_text("")  # the orphaned remote worker returns, then finds its pipes closed
            killer.join()
    assert running.is_set()
    assert result.code == "crashed"
    assert result.message == "the worker exited with code 255: Connection to 127.0.0.1 closed by remote host."
    assert time.monotonic() - started < 20


def test_a_module_of_the_project_is_a_file_a_package_or_a_namespace_folder(tmp_path):
    (tmp_path / "blocks.py").write_text("")
    (tmp_path / "layers").mkdir()
    (tmp_path / "layers" / "__init__.py").write_text("")
    (tmp_path / "data").mkdir()
    assert project_module(str(tmp_path), "blocks") == str(tmp_path / "blocks.py")
    assert project_module(str(tmp_path), "layers.attention") == str(tmp_path / "layers" / "__init__.py")
    assert project_module(str(tmp_path), "data") == str(tmp_path / "data")
    assert project_module(str(tmp_path), "torch") is None
