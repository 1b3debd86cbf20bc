"""One list of chips for every command: `lsp-check --chip` and `lsp-check run --chip` accept
and refuse the same names, read from mappings/platform/chips.toml."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lsp.knowledge.chips import load_chips

SERVER = Path(__file__).resolve().parents[2] / "server"
NAMES = "910A, 310P, A2, A3, 950DT (or 910, 910ProB, 910B, 910C, 950)"
CANONICAL = {"910A": "910A", "310P": "310P", "A2": "A2", "A3": "A3", "950DT": "950DT", "910": "910A",
             "910ProB": "910A", "910B": "A2", "910C": "A3", "950": "950DT", "a2": "A2", "910prob": "910A",
             "950dt": "950DT"}
REFUSED = ("H100", "950D", "")


def lsp_check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascend_lsp.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(SERVER)}, timeout=120)


@pytest.mark.parametrize("name", [*CANONICAL, *REFUSED])
def test_check_and_run_accept_and_refuse_the_same_chips(tmp_path, name):
    (tmp_path / "clean.py").write_text("x = 1\n")
    check = lsp_check(tmp_path, "--no-cache", "--chip", name, "clean.py")
    # the file does not exist: the run fails after its arguments were accepted
    run = lsp_check(tmp_path, "run", "missing.py::f", "--target", "emulate", "--chip", name)
    refusal = f"argument --chip: must be one of {NAMES}, got {name!r}"
    if name in REFUSED:
        assert (check.returncode, run.returncode) == (2, 2)
        assert check.stderr.splitlines()[-1] == f"lsp-check: error: {refusal}"
        assert run.stderr.splitlines()[-1] == f"lsp-check run: error: {refusal}"
    else:
        assert (check.returncode, check.stderr) == (0, "")
        assert (run.returncode, run.stderr) == (2, "")
        assert run.stdout == "Run on emulate f: failed: missing.py: cannot read: No such file or directory\n"


def test_every_name_and_alias_in_any_case_is_one_chip():
    chips = load_chips()
    assert {name: chips.canonical(name) for name in CANONICAL} == CANONICAL
    assert chips.names() == NAMES
    with pytest.raises(ValueError, match=r"^must be one of .*, got 910$"):
        chips.canonical(910)  # a TOML number is not a name


def test_what_each_chip_does_to_numbers():
    chips = load_chips().chips
    older = {name: ("saturation" in c.lacks, "bf16" in c.lacks, c.hf32) for name, c in chips.items()}
    assert older == {"910A": (True, True, False), "310P": (True, True, False), "A2": (False, False, True),
                     "A3": (False, False, True), "950DT": (False, False, True)}
    assert chips["310P"].emulation[1] == ("no HF32 emulated (HF32 is the A2/A3 cube format; 910A-class fp32 "
                                          "handling is not emulated)")
    assert chips["910A"].support_column == "A2" and chips["A3"].support_column == "A3"


def test_the_editor_setting_offers_the_same_chips():
    """VS Code reads a setting's choices from the extension's manifest, which cannot ask the
    package: the manifest's list is checked against chips.toml instead."""
    import json

    manifest = json.loads((SERVER.parent / "client-vscode" / "package.json").read_text(encoding="utf-8"))
    setting = manifest["contributes"]["configuration"]["properties"]["ascend-lsp.chip"]
    assert setting["enum"] == list(load_chips().chips)
