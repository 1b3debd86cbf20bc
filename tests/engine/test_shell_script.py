"""Shell launch scripts: which files are scripts, and what their parser reads (assignments,
commands, exact ranges) without running anything; findings, noqa and fixes in them."""

from __future__ import annotations

import pytest

from ascend_lsp.analysis import analyze, fix_text
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Range
from ascend_lsp.engine.packaging import document_kind
from ascend_lsp.engine.shell_script import ShellScript, options
from ascend_lsp.engine.text import SourceText

SCRIPT = "\n".join([
    "#!/bin/bash",
    "export CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO  # comment CUDA_LAUNCH_BLOCKING=1",
    'A="x y" env -u HOME B=\'q\' sudo nvidia-smi -L 2>err.log',
    "torchrun \\",
    "  --nproc_per_node=8 train.py",
    "N=$(nvidia-smi --query-gpu=name --format=csv | wc -l) `nvcc -V`",
    "cat <<EOF > x.sh",
    "export C=1",
    "EOF",
    "if [ -n \"$N\" ]; then pip install 'flash-attn'; fi",
    "",
])


def _read(text: str) -> tuple[list[tuple], list[tuple]]:
    script = ShellScript(SourceText(text))
    assert script.no_comment == ShellScript(SourceText(SCRIPT)).no_comment
    assignments = [(a.name, a.value, a.literal, a.name_range, a.value_range) for a in script.assignments]
    commands = [([w.text for w in c.words], c.range) for c in script.commands]
    return assignments, commands


def test_assignments_and_commands_with_their_ranges() -> None:
    assignments, commands = _read(SCRIPT)
    assert assignments == [
        ("CUDA_VISIBLE_DEVICES", "0,1", True, Range(1, 7, 1, 27), Range(1, 28, 1, 31)),
        ("NCCL_DEBUG", "INFO", True, Range(1, 32, 1, 42), Range(1, 43, 1, 47)),
        ("A", "x y", True, Range(2, 0, 2, 1), Range(2, 2, 2, 7)),
        ("B", "q", True, Range(2, 20, 2, 21), Range(2, 22, 2, 25)),
        ("N", "$(nvidia-smi --query-gpu=name --format=csv | wc -l)", False, Range(5, 0, 5, 1), Range(5, 2, 5, 53)),
    ]
    assert commands == [
        (["sudo", "nvidia-smi", "-L"], Range(2, 26, 2, 44)),
        (["nvidia-smi", "-L"], Range(2, 31, 2, 44)),
        (["torchrun", "--nproc_per_node=8", "train.py"], Range(3, 0, 4, 29)),
        (["nvidia-smi", "--query-gpu=name", "--format=csv"], Range(5, 4, 5, 44)),
        (["wc", "-l"], Range(5, 47, 5, 52)),
        (["`nvcc -V`"], Range(5, 54, 5, 63)),
        (["nvcc", "-V"], Range(5, 55, 5, 62)),
        (["cat"], Range(6, 0, 6, 3)),
        (["[", "-n", "$N", "]"], Range(9, 3, 9, 14)),
        (["pip", "install", "flash-attn"], Range(9, 21, 9, 45)),
    ]


def test_the_lines_a_comment_would_change() -> None:
    # a continuation, a heredoc's text and its delimiter; then a quoted word and a `$(...)` that go on
    assert ShellScript(SourceText(SCRIPT)).no_comment == {3, 7, 8}
    text = 'X="a\nb" Y=$(echo \\\n 1)\necho ok\n'
    assert ShellScript(SourceText(text)).no_comment == {0, 1}


@pytest.mark.parametrize("line_break", ["\r\n", "\r"])
def test_every_line_break_gives_the_same_items(line_break: str) -> None:
    assert _read(SCRIPT.replace("\n", line_break)) == _read(SCRIPT)


@pytest.mark.parametrize(("path", "text", "kind"), [
    ("train.sh", "", "shell"), ("job.sbatch", "", "shell"), ("job.slurm", "", "shell"), ("env.zsh", "", "shell"),
    ("run.bash", "", "shell"), ("launch", "#!/bin/bash -e\n", "shell"), ("launch", "#! /bin/sh\r\n", "shell"),
    ("launch", "#!/usr/bin/env -S dash -e\n", "shell"), (None, "#!/bin/zsh\n", "shell"),
    ("launch", "#!/usr/bin/env python3\n", None), ("launch", "echo hi\n", None), ("run.py", "#!/bin/sh\n", None),
    ("notes.txt", "#!/bin/sh\n", None),
])
def test_which_files_are_launch_scripts(path: str | None, text: str, kind: str | None) -> None:
    assert document_kind(path, text) == kind


def test_findings_noqa_and_fixes_in_a_script() -> None:
    text = "export CUDA_VISIBLE_DEVICES=0\r\nnvidia-smi  # noqa: NPU124\r\nCUDA_VISIBLE_DEVICES=0 python t.py\r\n"
    settings = Settings(select=("NPU108", "NPU124"))
    findings = analyze(text, settings, "run.sh").findings
    assert [(f.code, f.range) for f in findings] == [("NPU108", Range(0, 7, 0, 27)), ("NPU108", Range(2, 0, 2, 20))]
    fixed = fix_text(text, settings, "run.sh")
    assert fixed.text == text.replace("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES")
    # the same text as Python is not a script: a syntax error, and no variable is read
    assert {f.code for f in analyze(text, settings, "run.py").findings} == {"E999"}


def test_the_arms_of_if_chains_that_test_for_the_npu() -> None:
    """An arm runs from after `then`/`else` to its `elif`/`else`/`fi`; a chain without an NPU test,
    or with a negated one, gives no arm; nested chains and `$(...)` are read too."""
    script = ShellScript(SourceText("\n".join([
        'if command -v npu-smi; then a; elif [ "$D" = cuda ]; then b; else c; fi',
        "if [ -n \"$X\" ]; then nvidia-smi; fi",
        "if ! command -v npu-smi; then nvidia-smi; fi",
        'if [ "$D" != npu ]; then x; fi',
        "if [ $USE_NPU = 1 ]; then",
        "  if true; then y; fi",
        "else N=$(nvidia-smi -L); fi",
        "",
    ])))
    assert script.on_npu == [Range(0, 27, 0, 31), Range(4, 25, 6, 0)]  # ` a; ` and the outer then-arm
    assert script.off_npu == [Range(0, 57, 0, 61), Range(0, 65, 0, 69), Range(6, 4, 6, 25)]  # ` b; `, ` c; `, the else


def test_a_default_with_quotes_and_a_command_ends_at_its_own_brace() -> None:
    text = 'NAME="${EXP:-$(basename "${DIR,,}")-run}"\nMSG="${MSG:-it\'s}"\npython3 -m pkg.main trainer.device=cuda\n'
    script = ShellScript(SourceText(text))
    assert [(a.name, a.value) for a in script.assignments] == [
        ("NAME", '${EXP:-$(basename "${DIR,,}")-run}'), ("MSG", "${MSG:-it's}")]
    assert [[w.text for w in c.words] for c in script.commands] == [["python3", "-m", "pkg.main", "trainer.device=cuda"]]


@pytest.mark.parametrize(("line", "expected"), [
    ("python train.py --device cuda:0 --fp16", [("device", "cuda:0", "train.py", Range(0, 25, 0, 31))]),
    ("torchrun --nproc_per_node=8 -m pkg.run --device='cuda'", [
        ("nproc_per_node", "8", "torchrun", Range(0, 26, 0, 27)), ("device", "cuda", "pkg.run", Range(0, 48, 0, 54))]),
    ("accelerate launch --gpu_ids 0,1 src/train.py trainer.device=cuda", [
        ("gpu_ids", "0,1", "accelerate", Range(0, 28, 0, 31)), ("trainer.device", "cuda", "train.py", Range(0, 60, 0, 64))]),
    ("lm_eval --model hf --device cuda:0", [("model", "hf", "lm_eval", Range(0, 16, 0, 18)),
                                           ("device", "cuda:0", "lm_eval", Range(0, 28, 0, 34))]),
    ("make device=cuda", []),  # make's variable, not an override a Python program reads
    ("echo python train.py --device cuda", []),  # text
])
def test_options_and_whose_they_are(line: str, expected: list) -> None:
    source = SourceText(line + "\n")
    script = ShellScript(source)
    found = [o for c in script.commands for o in options(c, source)]
    assert [(o.name, o.value, o.owner, o.range) for o in found] == expected


def test_a_wrappers_command_has_the_options() -> None:
    source = SourceText("nohup python serve.py --device cuda &\n")
    wrapper, command = ShellScript(source).commands
    assert options(wrapper, source) == []
    assert [(o.owner, o.value) for o in options(command, source)] == [("serve.py", "cuda")]
