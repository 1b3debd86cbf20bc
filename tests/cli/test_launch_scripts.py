"""lsp-check over shell launch scripts: which files of a folder are scripts (by name, by a
shell's `#!`), ignore files and `exclude` as for any kind, exact 1-based columns, CRLF kept
by `--fix`, noqa in a shell comment."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .test_cli import run, write

TRAIN = "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO\ntorchrun --nproc_per_node=2 train.py\n"
LAUNCH = "#!/usr/bin/env bash\nnvidia-smi -L  # noqa: NPU124\nnvidia-smi\n"
SBATCH = "#!/bin/bash\r\n#SBATCH --nodes=1\r\nexport DS_ACCELERATOR=cuda\r\nsrun pip install flash-attn\r\n"


def scripts(folder: Path) -> None:
    write(folder / "train.sh", TRAIN)
    write(folder / "launch", LAUNCH)
    (folder / "job.sbatch").write_bytes(SBATCH.encode())
    write(folder / "README", "nvidia-smi\n")  # no #!: not a script
    write(folder / "run.py", "#!/usr/bin/env python\nimport os\n")


def test_a_folder_checks_its_scripts_with_exact_columns(project: Path, capsys) -> None:
    scripts(project / "jobs")
    code, out, _ = run(capsys, "jobs", "--output-format", "concise", "--no-cache")
    assert code == 1
    assert out.splitlines()[:6] == [
        "jobs/job.sbatch:3:8: NPU127 [*] `DS_ACCELERATOR=cuda` selects CUDA. Use `npu`. DeepSpeed's accelerator list "
        "has npu; unset, DeepSpeed detects the NPU before CUDA.",
        "jobs/job.sbatch:4:18: NPU502 `flash-attn` is built for CUDA GPUs. flash-attn has CUDA kernels only and does "
        "not install on Ascend; attention goes through torch_npu.npu_fusion_attention or SDPA.",
        "jobs/launch:3:1: NPU124 [-] `nvidia-smi` needs NVIDIA's driver or toolkit. Use `npu-smi info`. `npu-smi info` "
        "prints the NPUs' health, power, temperature, AI Core use and memory, in its own table.",
        "jobs/train.sh:2:8: NPU108 [*] `CUDA_VISIBLE_DEVICES` is a CUDA/NCCL environment variable. Use "
        "`ASCEND_RT_VISIBLE_DEVICES`. Use ASCEND_RT_VISIBLE_DEVICES; torch_npu reads it to choose the visible NPUs.",
        "jobs/train.sh:2:33: NPU108 `NCCL_DEBUG` is a CUDA/NCCL environment variable. No effect on Ascend: HCCL reads "
        "no NCCL_* variable, and no source names an HCCL counterpart for this one.",
        "Found 5 findings in 3 files. [*] 2 fixable with `--fix`. [-] 1 more with `--unsafe-fixes`.",
    ]


def test_fix_rewrites_the_scripts_and_keeps_their_line_breaks(project: Path, capsys) -> None:
    scripts(project / "jobs")
    run(capsys, "jobs", "--fix", "--no-cache")
    assert (project / "jobs" / "train.sh").read_text() == TRAIN.replace("CUDA_VISIBLE", "ASCEND_RT_VISIBLE")
    assert (project / "jobs" / "job.sbatch").read_bytes() == SBATCH.replace("=cuda", "=npu").encode()
    assert (project / "jobs" / "launch").read_text() == LAUNCH  # its fix is unsafe
    run(capsys, "jobs", "--fix", "--unsafe-fixes", "--no-cache")
    assert (project / "jobs" / "launch").read_text() == LAUNCH.replace("\nnvidia-smi\n", "\nnpu-smi info\n")


def test_ignore_files_and_exclude_apply_to_scripts(project: Path, capsys) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    write(project / ".gitignore", "generated/\n")
    scripts(project / "generated")
    scripts(project / "jobs")
    _, out, _ = run(capsys, ".", "--output-format", "concise", "-q", "--no-cache")
    assert {line.split(":")[0] for line in out.splitlines()} == {"jobs/train.sh", "jobs/launch", "jobs/job.sbatch"}
    write(project / "pyproject.toml", '[tool.ascend-lsp]\nexclude = ["launch"]\n')
    _, out, _ = run(capsys, "jobs", "--output-format", "concise", "-q", "--no-cache")
    assert {line.split(":")[0] for line in out.splitlines()} == {"jobs/train.sh", "jobs/job.sbatch"}
    _, out, _ = run(capsys, "jobs", "--output-format", "concise", "-q", "--no-cache", "--select", "NPU2")
    assert out == ""


def test_add_noqa_writes_only_where_a_comment_keeps_the_script(project: Path, capsys) -> None:
    path = write(project / "run.sh", "export CUDA_VISIBLE_DEVICES=0 \\\n  NCCL_DEBUG=INFO\nnvidia-smi\n"
                                     "cat <<EOF\nnvidia-smi\nEOF\n")
    code, _, err = run(capsys, "run.sh", "--add-noqa", "--no-cache")
    assert path.read_text() == ("export CUDA_VISIBLE_DEVICES=0 \\\n  NCCL_DEBUG=INFO  # noqa: NPU108\n"
                                "nvidia-smi  # noqa: NPU124\ncat <<EOF\nnvidia-smi\nEOF\n")
    assert code == 1 and "run.sh:1: NPU108 not suppressed: the line ends inside a multi-line string, a heredoc" in err
