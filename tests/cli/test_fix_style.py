"""lsp-check's `--fix-style` and `fix-style` in [tool.ascend-lsp]: the value checked, the
portable fixes written, and the npu style kept where the project pins an older torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_lsp.cli.main import main
from ascend_lsp.engine.model import FIX_STYLES

CUDA = "import torch\n\nx = torch.ones(2).cuda()\ntorch.cuda.empty_cache()\n"
BOUND = 'accelerator_device = torch.accelerator.current_accelerator() or torch.device("cpu")\n'
PORTABLE = ("import torch\n" + BOUND + "\nx = torch.ones(2).to(accelerator_device)\n"
            "if torch.accelerator.is_available():\n    torch.accelerator.empty_cache()\n")
NPU = "import torch\nimport torch_npu\n\nx = torch.ones(2).npu()\ntorch.npu.empty_cache()\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def fixed(folder: Path, *args: str) -> str:
    path = write(folder / "train.py", CUDA)
    assert main(["--no-cache", "--fix", "--exit-zero", "-q", *args, str(path)]) == 0
    return path.read_text(encoding="utf-8")


def test_default_is_npu(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'p'\n")
    assert fixed(tmp_path) == NPU


def test_command_line_and_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "a" / "pyproject.toml", "[tool.ascend-lsp]\nfix-style = \"portable\"\n")
    assert fixed(tmp_path / "a") == PORTABLE
    assert fixed(tmp_path / "a", "--fix-style", "npu") == NPU  # the command line overrides the file
    write(tmp_path / "b" / "pyproject.toml", "[project]\nname = 'p'\n")
    assert fixed(tmp_path / "b", "--fix-style", "portable") == PORTABLE


def test_unknown_style_exits_2(tmp_path: Path, capsys) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ascend-lsp]\nfix-style = \"cuda\"\n")
    path = write(tmp_path / "train.py", CUDA)
    assert main(["--no-cache", str(path)]) == 2
    assert "`fix-style` must be one of npu, portable, got 'cuda'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["--fix-style", "cuda", str(path)])
    assert exited.value.code == 2
    assert "invalid choice: 'cuda'" in capsys.readouterr().err


def test_older_torch_pin_keeps_the_npu_fix(tmp_path: Path, capsys) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ascend-lsp]\nfix-style = \"portable\"\n")
    write(tmp_path / "requirements.txt", "torch>=2.1,<2.8\n")
    # .cuda() needs the device binding (torch 2.7); empty_cache's portable form needs 2.9
    path = write(tmp_path / "train.py", CUDA)
    assert main(["--no-cache", "--output-format", "concise", "--exit-zero", str(path)]) == 0
    out = capsys.readouterr().out
    assert ("NPU103 [*] `torch.cuda.empty_cache` is a CUDA API. Use `torch.npu.empty_cache`. Fixed for the NPU: the "
            "project pins torch `>=2.1,<2.8`, and the portable form needs torch 2.9.") in out
    assert "Fixed for the NPU: the project pins torch `>=2.1,<2.8`, and the portable form needs torch 2.7." in out
    assert fixed(tmp_path) == NPU
    write(tmp_path / "requirements.txt", "torch>=2.9\n")
    assert fixed(tmp_path) == PORTABLE


def test_cached_findings_follow_the_torch_pin(tmp_path: Path, capsys) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ascend-lsp]\nfix-style = \"portable\"\n")
    write(tmp_path / "requirements.txt", "torch>=2.1\n")
    path = write(tmp_path / "train.py", CUDA)
    cache = ["--output-format", "concise", "--exit-zero", str(path)]
    main(cache)
    assert "the project pins torch `>=2.1`" in capsys.readouterr().out
    write(tmp_path / "requirements.txt", "torch>=2.9\n")
    main(cache)
    assert "the project pins torch" not in capsys.readouterr().out


def test_the_editor_setting_offers_the_styles_the_engine_knows() -> None:
    import json

    manifest = json.loads((Path(__file__).resolve().parents[2] / "client-vscode" / "package.json").read_text("utf-8"))
    setting = manifest["contributes"]["configuration"]["properties"]["ascend-lsp.fixStyle"]
    assert setting["enum"] == list(FIX_STYLES) and setting["default"] == "npu"
