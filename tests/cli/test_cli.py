"""lsp-check end to end: exit codes, formats, fixes, configuration, notebooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ascend_lsp.cli.main import main

CUDA = "import torch\n\nx = torch.ones(2).cuda()\ntorch.cuda.synchronize()\n"
CLEAN = "import torch\n\nx = torch.ones(2)\n"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_exit_codes(project: Path, capsys) -> None:
    write(project / "clean.py", CLEAN)
    write(project / "cuda.py", CUDA)
    assert run(capsys, "clean.py")[0] == 0
    assert run(capsys, "cuda.py")[0] == 1
    assert run(capsys, "cuda.py", "--exit-zero")[0] == 0
    code, _, err = run(capsys, "missing.py")
    assert code == 2 and "missing.py: no such file or directory" in err
    code, _, err = run(capsys, "cuda.py", "--select", "NPU2")
    assert code == 0


def test_full_output_has_position_message_fix_and_link(project: Path, capsys) -> None:
    write(project / "cuda.py", CUDA)
    code, out, _ = run(capsys, "cuda.py", "--no-cache")
    assert code == 1
    assert "cuda.py:3:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`." in out
    assert "3 | x = torch.ones(2).cuda()" in out
    assert "= fix: Replace `.cuda()` with `.npu()`" in out
    assert "= docs: https://github.com/ascend-lsp/ascend-lsp/blob/main/docs/rules/NPU102.md" in out
    assert "Found 2 findings in 1 file. [*] 2 fixable with `--fix`." in out


def test_columns_are_code_points_on_lines_with_chinese_and_emoji(project: Path, capsys) -> None:
    write(project / "wide.py", 'import torch\nnote = "设备🚀"; x = torch.device("cuda")  # 中文 🚀\n')
    code, out, _ = run(capsys, "wide.py", "--output-format", "concise", "-q")
    assert out.strip() == ("wide.py:2:32: NPU101 [*] Device string `cuda` selects a CUDA device. Use `npu`. "
                           + out.strip().split("Use `npu`. ", 1)[1])
    data = json.loads(run(capsys, "wide.py", "--output-format", "json")[1])
    assert data[0]["location"] == {"row": 2, "column": 32}
    assert data[0]["end_location"] == {"row": 2, "column": 38}


def test_json_output(project: Path, capsys) -> None:
    write(project / "cuda.py", CUDA)
    code, out, _ = run(capsys, "cuda.py", "--output-format", "json")
    data = json.loads(out)
    assert code == 1
    assert [d["code"] for d in data] == ["NPU102", "NPU103"]
    first = data[0]
    assert first["filename"] == "cuda.py" and first["severity"] == "warning"
    assert first["location"] == {"row": 3, "column": 19} and first["end_location"] == {"row": 3, "column": 23}
    assert first["fix"]["applicability"] == "safe"
    assert {"content": "npu", "location": {"row": 3, "column": 19}, "end_location": {"row": 3, "column": 23}} \
        in first["fix"]["edits"]
    assert first["url"].endswith("/NPU102.md")


def test_github_output(project: Path, capsys) -> None:
    write(project / "cuda.py", CUDA)
    _, out, _ = run(capsys, "cuda.py", "--output-format", "github")
    lines = out.strip().splitlines()
    assert lines[0] == ("::warning file=cuda.py,line=3,col=19,endLine=3,endColumn=23,title=NPU102::"
                        "NPU102 `.cuda()` is CUDA-only. Use `.npu()`.")
    assert len(lines) == 2


def test_statistics_and_output_file(project: Path, capsys) -> None:
    write(project / "cuda.py", CUDA + "y = torch.ones(1).cuda()\n")
    code, out, _ = run(capsys, "cuda.py", "--statistics", "-o", "report/stats.txt")
    assert code == 1
    stats = (project / "report" / "stats.txt").read_text().splitlines()
    assert stats == ["     2  NPU102  [*] cuda-tensor-method", "     1  NPU103  [*] torch-cuda-api"]


def test_fix_applies_safe_fixes_only_and_is_idempotent(project: Path, capsys) -> None:
    path = write(project / "mixed.py", CUDA + "torch.backends.cuda.matmul.allow_tf32 = True\n")
    code, out, _ = run(capsys, "mixed.py", "--fix", "--output-format", "concise")
    assert path.read_text() == ("import torch\nimport torch_npu\n\nx = torch.ones(2).npu()\ntorch.npu.synchronize()\n"
                                "torch.backends.cuda.matmul.allow_tf32 = True\n")
    assert code == 1 and "NPU106 [-]" in out and "Fixed 2 findings." in out
    before = path.read_text()
    run(capsys, "mixed.py", "--fix")
    assert path.read_text() == before
    code, out, _ = run(capsys, "mixed.py", "--fix", "--unsafe-fixes")
    assert code == 0
    assert path.read_text().endswith("torch.npu.matmul.allow_hf32 = True\n")


def test_diff_writes_nothing(project: Path, capsys) -> None:
    path = write(project / "cuda.py", CUDA)
    code, out, err = run(capsys, "cuda.py", "--diff")
    assert code == 1
    assert path.read_text() == CUDA
    assert out.splitlines()[2:] == [
        "@@ -1,4 +1,5 @@", " import torch", "+import torch_npu", " ",
        "-x = torch.ones(2).cuda()", "-torch.cuda.synchronize()", "+x = torch.ones(2).npu()",
        "+torch.npu.synchronize()",
    ]
    assert "Would fix 2 findings." in err


def test_fix_refuses_a_file_changed_since_it_was_read(project: Path) -> None:
    from ascend_lsp.cli.check import write_atomically
    from ascend_lsp.source_codec import read_source

    path = write(project / "cuda.py", CUDA)
    source = read_source(str(path))
    path.write_text(CUDA + "# edited meanwhile\n")
    assert write_atomically(source, b"new") == "changed since it was read; not written"
    assert path.read_text() == CUDA + "# edited meanwhile\n"
    source = read_source(str(path))
    assert write_atomically(source, b"new") == ""
    assert path.read_bytes() == b"new"
    assert [p.name for p in project.iterdir() if p.name.endswith(".tmp")] == []


def test_fix_keeps_crlf_and_bom(project: Path, capsys) -> None:
    path = project / "win.py"
    path.write_bytes(b"\xef\xbb\xbfimport torch\r\n\r\nx = torch.ones(2).cuda()\r\n")
    run(capsys, "win.py", "--fix")
    assert path.read_bytes() == b"\xef\xbb\xbfimport torch\r\nimport torch_npu\r\n\r\nx = torch.ones(2).npu()\r\n"


def test_config_select_ignore_per_file_ignores_and_noqa(project: Path, capsys) -> None:
    write(project / "pyproject.toml", textwrap.dedent("""
        [tool.ascend-lsp]
        ignore = ["NPU103"]
        per-file-ignores = {"tests/*" = ["NPU1"]}
    """))
    write(project / "a.py", CUDA + "y = torch.ones(1).cuda()  # noqa: NPU102\nz = torch.ones(1).cuda()  # noqa\n")
    write(project / "tests" / "t.py", CUDA)
    code, out, _ = run(capsys, ".", "--output-format", "concise", "-q", "--no-cache")
    assert out.splitlines() == ["a.py:3:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`."]
    code, out, _ = run(capsys, "a.py", "--output-format", "concise", "-q", "--extend-select", "NPU103",
                       "--no-cache")
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["NPU102"]
    code, out, _ = run(capsys, "a.py", "--output-format", "concise", "-q", "--select", "NPU103", "--no-cache")
    assert [line.split(": ")[1].split()[0] for line in out.splitlines()] == ["NPU103"]


def test_broken_config_is_a_clear_error(project: Path, capsys) -> None:
    write(project / "pyproject.toml", "[tool.ascend-lsp]\nchip = \"H100\"\n")
    write(project / "a.py", CUDA)
    code, out, err = run(capsys, "a.py")
    assert code == 2
    assert "chip` must be one of 910A, 310P, A2, A3, 950DT (or 910, 910ProB, 910B, 910C, 950), got 'H100'" in err
    assert "Traceback" not in err
    write(project / "pyproject.toml", "[tool.ascend-lsp\n")
    code, _, err = run(capsys, "a.py")
    assert code == 2 and "pyproject.toml: cannot read" in err
    write(project / "pyproject.toml", "[tool.ascend-lsp]\nspeling = 1\n")
    code, _, err = run(capsys, "a.py")
    assert code == 2 and "unknown setting `speling`" in err


def test_chip_and_version_select_the_support_list(project: Path, capsys) -> None:
    write(project / "rnn.py", "import torch\n\nrnn = torch.nn.RNN(2, 2)\n")
    code, out, _ = run(capsys, "rnn.py", "--output-format", "concise", "-q", "--chip", "A3")
    # 2.13.0's wheel registers an NPU kernel for every aten operator nn.RNN runs (mappings/torch_npu/kernels-2.13.0.toml)
    assert "NPU201 Ascend's support list marks `torch.nn.RNN` ✘ on A3, but torch_npu 2.13.0 registers" in out
    code, out, _ = run(capsys, "rnn.py", "--output-format", "concise", "-q", "--torch-npu-version", "2.7.1")
    assert "NPU201 `torch.nn.RNN` is not supported on A2 (torch_npu 2.7.1)." in out
    code, _, err = run(capsys, "rnn.py", "--torch-npu-version", "9.9")
    assert code == 2 and "`torch-npu-version` '9.9' has no support list (known: 2.13.0, 2.7.1)" in err


def test_extra_mappings_extend_and_override(project: Path, capsys) -> None:
    write(project / "team.toml", textwrap.dedent("""
        [[api]]
        name = "mylib.cuda_kernels"
        rule = "NPU306"
        prefix = true
        note = "Our CUDA kernels: use mylib.npu_kernels."
        source = "team wiki"
    """))
    write(project / "pyproject.toml", "[tool.ascend-lsp]\nextra-mappings = [\"team.toml\"]\n")
    write(project / "a.py", "from mylib.cuda_kernels import fused\n")
    code, out, _ = run(capsys, "a.py", "--output-format", "concise", "-q")
    assert out.strip() == ("a.py:1:32: NPU306 `mylib.cuda_kernels.fused` builds CUDA code. "
                           "Our CUDA kernels: use mylib.npu_kernels.")


def test_notebooks_are_checked_and_fixed_by_cell(project: Path, capsys) -> None:
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Train on cuda"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["%matplotlib inline\n", "import torch"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["!nvidia-smi\n", "x = torch.ones(2).cuda()"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["if in_colab:\n", "    VERSION = !curl -s https://example.org/v\n",
                        "    !pip install -q torch=={VERSION[0]} \\\n", "        torchvision\n",
                        "!HF_HUB_ENABLE_HF_TRANSFER=1 \\\n", "    hf download org/model \\\n", "    --exclude original/*\n",
                        "pip install -U -q matplotlib\n", "t, u = %time f()\n", "y = x != 1"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["%%bash\n", "export CUDA_HOME=/usr/local/cuda\n", "  nvcc --version"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["%%time\n", "z = torch.ones(2).cuda()"]},
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = project / "nb.ipynb"
    path.write_text(json.dumps(notebook, indent=1))
    code, out, _ = run(capsys, "nb.ipynb", "--output-format", "concise", "-q")
    assert out.strip() == ("nb.ipynb:cell 3:2:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`.\n"
                           "nb.ipynb:cell 6:2:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`.")
    run(capsys, "nb.ipynb", "--fix")
    cells = json.loads(path.read_text())["cells"]
    assert cells[1]["source"] == ["%matplotlib inline\n", "import torch\n", "import torch_npu"]
    assert cells[2]["source"] == ["!nvidia-smi\n", "x = torch.ones(2).npu()"]
    assert cells[0]["source"] == ["# Train on cuda"]
    assert cells[3]["source"] == notebook["cells"][3]["source"]
    assert cells[4]["source"] == notebook["cells"][4]["source"]
    assert cells[5]["source"] == ["%%time\n", "z = torch.ones(2).npu()"]


def test_gitignore_is_respected_in_git_repositories(project: Path, capsys) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(project / ".gitignore", "generated/\n")
    write(project / "generated" / "g.py", CUDA)
    write(project / "src" / "s.py", CUDA)
    write(project / ".venv" / "lib" / "v.py", CUDA)
    _, out, _ = run(capsys, ".", "--output-format", "concise", "-q", "--no-cache")
    assert {line.split(":")[0] for line in out.splitlines()} == {"src/s.py"}
    _, out, _ = run(capsys, "generated/g.py", "--output-format", "concise", "-q", "--no-cache")
    assert out.startswith("generated/g.py:")


def test_globs(project: Path, capsys) -> None:
    write(project / "a" / "one.py", CUDA)
    write(project / "b" / "two.py", CUDA)
    write(project / "b" / "notes.txt", "cuda")
    _, out, _ = run(capsys, "**/t*.py", "--output-format", "concise", "-q")
    assert {line.split(":")[0] for line in out.splitlines()} == {"b/two.py"}


def test_rules_and_explain(project: Path, capsys) -> None:
    code, out, _ = run(capsys, "rules")
    assert code == 0 and [line[:4] for line in out.splitlines()[:2]] == ["E902", "E999"]
    assert any(line.startswith("NPU103  torch-cuda-api") for line in out.splitlines())
    code, out, _ = run(capsys, "explain", "torch.cuda.Stream")
    assert code == 0
    assert out.splitlines()[:3] == [
        "`torch.cuda.Stream` — NPU103 torch-cuda-api (warning)",
        "replacement: `torch.npu.Stream` (fix: safe)",
        "source: torch_npu-2.14.0 wheel: torch_npu/contrib/transfer_to_npu.py:382",
    ]
    code, out, _ = run(capsys, "explain", "torch.cuda.amp.GradScaler")
    assert out.splitlines()[:2] == ["`torch.cuda.amp.GradScaler` — NPU103 torch-cuda-api (warning)",
                                    "deprecated upstream"]
    code, out, _ = run(capsys, "explain", "NPU401")
    assert code == 0 and out.startswith("# NPU401: nccl-backend-check")
    code, _, err = run(capsys, "explain", "torch.nothing_here")
    assert code == 2 and "neither a rule code nor an API" in err


def test_warm_run_uses_the_cache(project: Path, capsys) -> None:
    write(project / "pyproject.toml", "[tool.ascend-lsp]\n")
    path = write(project / "a.py", CUDA)
    first = run(capsys, "a.py", "--output-format", "json")[1]
    assert (project / ".lsp-check-cache").is_dir()
    assert run(capsys, "a.py", "--output-format", "json")[1] == first
    path.write_text(CLEAN)
    assert json.loads(run(capsys, "a.py", "--output-format", "json")[1]) == []


def test_edited_rules_invalidate_the_cache() -> None:
    from ascend_lsp.cli.cache import code_stamp, settings_key
    from ascend_lsp.engine.config import Settings
    from ascend_lsp.engine import registry

    module = Path(registry.__file__)
    before = module.stat()
    key = settings_key(Settings())
    try:
        os.utime(module, ns=(before.st_atime_ns, code_stamp() + 1))  # as an editor saving it would
        code_stamp.cache_clear()
        assert settings_key(Settings()) != key
    finally:
        os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
        code_stamp.cache_clear()


def test_console_script_runs_in_a_subprocess(project: Path) -> None:
    write(project / "cuda.py", CUDA)
    script = Path(sys.executable).with_name("lsp-check")
    proc = subprocess.run([str(script), "cuda.py", "--output-format", "concise"], capture_output=True, text=True,
                          cwd=project, env={**os.environ, "ASCEND_LSP_CACHE_DIR": str(project / ".c")})
    assert proc.returncode == 1, proc.stderr
    assert "cuda.py:4:1: NPU103 [*]" in proc.stdout
