"""The port runs in a child process: what makes libcst crash or give up (deeply nested code,
too little memory, too much time) is a clear error of `lsp-check port` (exit 2), never a dead
process; the child imports nothing from the workspace; a port made through it is the port
made in the process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lsp.port import PortError, child, port_source

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_cuda.py"
SCRIPT = Path(sys.executable).with_name("lsp-check")
DEEP = {
    "unary-minus": "import torch\nx = " + "-" * 100_000 + "1\n",
    "parentheses": "import torch\nx = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n",
    "plus-chain": "import torch\nx = " + "+".join(["1"] * 991) + "\n",  # 990 `+`
    # below nesting.MAX_DEPTH: refused by libcst's own RecursionError in the child
    "nested-lists": "import torch\nx = " + "[" * 140 + "]" * 140 + "\n",
    "and-chain": "import torch\nx = " + " and ".join(["a"] * 350) + "\n",
}


def lsp_check(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("name", DEEP)
def test_lsp_check_port_says_deeply_nested_code_is_too_deeply_nested(tmp_path, name):
    source = tmp_path / "deep.py"
    source.write_text(DEEP[name], encoding="utf-8")
    done = lsp_check(tmp_path, "port", str(source))
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"error: {source}: too deeply nested to port\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.py"]


def test_a_crash_of_libcst_ends_the_child_only_and_names_the_signal():
    # Past the cheap nesting check: what libcst's native parser makes of 100,000 minus signs.
    with pytest.raises(PortError) as caught:
        child.port_in_child(DEEP["unary-minus"], "deep.py")
    assert str(caught.value) == "the port crashed (SIGSEGV) in libcst"


def test_a_port_that_needs_more_memory_than_its_limit_is_stopped(monkeypatch):
    monkeypatch.setattr(child, "MEMORY_LIMIT_MB", 200)
    with pytest.raises(PortError) as caught:
        child.port_in_child(EXAMPLE.read_text(encoding="utf-8") * 100, "big.py")  # 13,400 lines
    assert str(caught.value) == "the port needs more than its 200 MiB of memory"


def test_a_port_that_takes_too_long_is_stopped(monkeypatch):
    monkeypatch.setattr(child, "TIMEOUT_S", 1)
    with pytest.raises(PortError) as caught:
        child.port_in_child(EXAMPLE.read_text(encoding="utf-8") * 100, "big.py")  # some 14 s
    assert str(caught.value) == "the port took longer than 1 s and was stopped"


def test_a_file_that_does_not_parse_says_where():
    with pytest.raises(PortError) as caught:
        port_source("import torch\ndef f(:\n", "broken.py")
    assert str(caught.value) == ("does not parse: Syntax Error @ 2:1.\nparser error: error at 3:0: expected one of "
                                 "), *, **, NAME\n\ndef f(:\n^")


def test_a_port_through_the_child_is_the_port_made_in_the_process():
    from ascend_lsp.port.rewrite import port

    text = EXAMPLE.read_text(encoding="utf-8")
    made = port_source(text, "train_cuda.py")
    assert made == port(text, "train_cuda.py")
    assert (made.count("converted"), made.count("manual"), made.count("unsupported")) == (43, 0, 25)


def test_the_port_imports_no_module_of_the_workspace(tmp_path):
    # A workspace on PYTHONPATH (as an editor's .env puts it) holding a `libcst` of its own.
    (tmp_path / "libcst").mkdir()
    (tmp_path / "libcst" / "__init__.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('imported').touch()\n", encoding="utf-8")
    source = tmp_path / "model.py"
    source.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    done = lsp_check(tmp_path, "port", str(source), env={"PYTHONPATH": path})
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout.startswith(f"{source} → {tmp_path / 'model_mindspore.py'}: 43 converted, 0 need a person, 25 unsupported")
    assert not (tmp_path / "libcst" / "imported").exists()
