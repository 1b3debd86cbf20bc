"""lsp-check and the language server look settings up one way (settings_lookup.py):
the same bad value is the same message in both, wherever it is set. lsp-check exits 2 with
it; the server shows it and goes on with the last good settings (here the defaults)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import pulled_and_shown

CUDA = "import torch\n\ntorch.cuda.synchronize()\n"
KNOWN = "(known: 2.13.0, 2.7.1)"


def server_messages(folder: Path, options: dict | None) -> tuple[list[str], list[str]]:
    """(the codes of a file's diagnostics, the server's showMessage texts)."""
    items, messages = pulled_and_shown(folder, CUDA, options=options)
    return [d["code"] for d in items], messages


def lsp_check(folder: Path, *options: str) -> subprocess.CompletedProcess:
    (folder / "a.py").write_text(CUDA, encoding="utf-8")
    return subprocess.run([sys.executable, "-c", "import sys; from ascend_lsp.cli.main import main; sys.exit(main())",
                           "--no-cache", *options, "a.py"], cwd=folder, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("where", ["pyproject.toml", "command line"])
def test_a_torch_npu_version_without_support_list(tmp_path: Path, where: str) -> None:
    folder = tmp_path.resolve()
    message = f"`torch-npu-version` '9.9' has no support list {KNOWN}"
    if where == "pyproject.toml":
        (folder / "pyproject.toml").write_text('[tool.ascend-lsp]\ntorch-npu-version = "9.9"\n', encoding="utf-8")
        message = f"{folder / 'pyproject.toml'}: {message}"
        done, served = lsp_check(folder), server_messages(folder, None)
    else:
        done = lsp_check(folder, "--torch-npu-version", "9.9")
        served = server_messages(folder, {"torch-npu-version": "9.9"})
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {message}\n")
    assert served == (["NPU103"], [message])


def test_an_unknown_code_is_named_by_its_setting(tmp_path: Path) -> None:
    folder = tmp_path.resolve()
    (folder / "pyproject.toml").write_text('[tool.ascend-lsp]\nextend-ignore = ["NPU99"]\n', encoding="utf-8")
    done = lsp_check(folder)
    message = done.stderr.removeprefix("error: ").removesuffix("\n")
    assert done.returncode == 2 and message.startswith(
        f"{folder / 'pyproject.toml'}: `extend-ignore`: unknown rule code or prefix `NPU99` (did you mean `")
    assert server_messages(folder, None) == (["NPU103"], [message])
