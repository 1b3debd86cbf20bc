"""The VS Code extension's vendored server (client-vscode/scripts/bundle-server.sh): what the
bundle holds, that it starts on a Python other than the one that built it, and that the
Run-on-NPU worker of a server started the way the extension starts it does not see the bundle."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.helpers import diagnostics, make_client, open_document, start

REPO = Path(__file__).resolve().parents[2]
COMPILED = (".so", ".pyd", ".dylib", ".dll")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The bundle, built by the extension's own script with this interpreter (pip from PyPI)."""
    out = tmp_path_factory.mktemp("vsix") / "bundled"
    done = subprocess.run(["bash", str(REPO / "client-vscode" / "scripts" / "bundle-server.sh")],
                          env={**os.environ, "PYTHON": sys.executable, "BUNDLE_DIR": str(out)},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def other_python() -> str | None:
    """An interpreter that is not the one running the tests (which built the bundle)."""
    here = Path(sys.executable).resolve()
    for candidate in ("/usr/bin/python3", shutil.which("python3.12"), shutil.which("python3.13"),
                      shutil.which("python3.10"), shutil.which("python3")):
        if candidate and Path(candidate).exists() and Path(candidate).resolve() != here:
            probe = subprocess.run([candidate, "-c", "import sys; print(sys.base_prefix, sys.version_info >= (3, 10))"],
                                   capture_output=True, text=True)
            prefix, _, ok = probe.stdout.strip().rpartition(" ")
            if probe.returncode == 0 and ok == "True" and prefix != sys.base_prefix:
                return candidate
    return None


OTHER = other_python()


def test_bundle_is_pure_python_and_holds_only_what_the_server_imports(bundle: Path) -> None:
    libs = bundle / "libs"
    top = {p.name for p in libs.iterdir() if not p.name.endswith(".dist-info")}
    assert {"ascend_lsp", "pygls", "lsprotocol", "attrs", "cattrs", "tomli", "exceptiongroup"} <= top
    assert not {"libcst", "yaml", "_yaml", "torch", "mindspore"} & top
    assert not [p for p in libs.rglob("*") if p.suffix in COMPILED]
    assert (libs / "ascend_lsp" / "mappings" / "torch_npu" / "cuda.toml").is_file()
    pages = {p.stem for p in (libs / "ascend_lsp" / "docs" / "rules").glob("*.md")}
    assert {"NPU102", "MS101", "E999"} <= pages  # the rule pages, for docs-url = "packaged"
    assert (bundle / "start_server.py").is_file()


def _server_env() -> dict[str, str]:
    """What the extension passes: the editor's environment, no PYTHONPATH of ours, no venv."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


@pytest.mark.skipif(OTHER is None, reason="no second Python 3.10+ on this machine (Debian: /usr/bin/python3)")
def test_server_starts_from_the_bundle_on_another_python(bundle: Path, tmp_path: Path) -> None:
    """lsp-style start: the other interpreter imports ascend_lsp and pygls from the bundle."""
    code = ("import runpy, sys; sys.argv = [sys.argv[1], '--version']; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    done = subprocess.run([OTHER, "-c", code, str(bundle / "start_server.py")],
                          capture_output=True, text=True, env=_server_env(), cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("ascend-lsp "), done.stdout + done.stderr


PROBE = '''import torch


def where_am_i():
    import importlib.util, json, os, sys
    record = {{"path": sys.path, "PYTHONPATH": os.environ.get("PYTHONPATH"),
              "pygls": getattr(importlib.util.find_spec("pygls"), "origin", None)}}
    with open({out!r}, "w", encoding="utf-8") as f:
        json.dump(record, f)
    return torch.ones(3)
'''


@pytest.fixture
async def bundled_client(bundle: Path, tmp_path: Path):
    """The server as the extension starts it with importStrategy useBundled."""
    config = ClientServerConfig(server_command=[OTHER or sys.executable, str(bundle / "start_server.py")],
                                client_factory=make_client, server_env=_server_env())
    client = await config.start()
    yield client
    await client.shutdown_session()
    await client.stop()


@pytest.mark.skipif(OTHER is None, reason="no second Python 3.10+ on this machine (Debian: /usr/bin/python3)")
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the torch extra is not installed")
async def test_bundled_server_lints_and_its_worker_does_not_see_the_bundle(
        bundled_client: LanguageClient, bundle: Path, tmp_path: Path) -> None:
    client = bundled_client
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # the worker runs this interpreter (it has torch); the server runs the other one
    await start(client, "visual-studio-code", workspace,
                options={"runner": {"target": "cpu", "timeout": 120, "interpreter": sys.executable}})
    example = (REPO / "examples" / "train_cuda.py").read_text(encoding="utf-8")
    found = await diagnostics(client, open_document(client, workspace / "train.py", example), 1)
    assert any(str(d.code).startswith("NPU") for d in found)

    out = tmp_path / "worker.json"
    uri = open_document(client, workspace / "probe.py", PROBE.format(out=str(out)))
    await diagnostics(client, uri, 1)
    result = await asyncio.wait_for(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ascend-lsp.run", arguments=[{"uri": uri, "function": "where_am_i"}])), 180)
    assert result["status"] == "passed", result
    seen = json.loads(out.read_text(encoding="utf-8"))
    libs = str(bundle / "libs")
    assert not [p for p in seen["path"] if p.startswith(libs)], seen["path"]
    assert libs not in (seen["PYTHONPATH"] or "")
    assert seen["pygls"] is None or not seen["pygls"].startswith(libs)
