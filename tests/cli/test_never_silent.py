"""Never wrong silently: a failing rule, a bad table row, an unknown code, a file that is no
file, a closed pipe or an unusable output path each end in a message and exit 2, never in a
green run, a traceback or a hang."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascend_lsp.cli.check import EXCERPT, check_file, Options
from ascend_lsp.cli.main import main
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.registry import HANDLERS, handles
from ascend_lsp.rules import RULE_SET
from ascend_lsp.source_codec import read_source
from ascend_lsp.sources import SourceError

CUDA = "import torch\n\nx = torch.ones(2).cuda()\ntorch.cuda.synchronize()\n"
LSP_CHECK = [sys.executable, "-m", "ascend_lsp.cli.main"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASCEND_LSP_CACHE_DIR", str(tmp_path / ".table-cache"))
    (tmp_path / "a.py").write_text(CUDA, encoding="utf-8")
    return tmp_path


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    assert "Traceback" not in out.out and "internal error" not in out.err
    return code, out.out, out.err


# --- a failing rule ------------------------------------------------------------------------
@pytest.fixture
def failing_rule(monkeypatch):
    def fail(checker, call, qualname):
        if qualname == "torch.cuda.synchronize":
            raise KeyError("boom")

    monkeypatch.setitem(HANDLERS, "call", list(HANDLERS["call"]))  # restored afterwards
    handles("call", "NPU103")(fail)
    RULE_SET.forget()
    yield
    RULE_SET.forget()


@pytest.mark.parametrize("args", [(), ("--fix",), ("--output-format", "json"), ("--output-format", "sarif"),
                                  ("--diff",)])
def test_a_failing_rule_fails_the_run_naming_the_rule_and_the_file(project, capsys, failing_rule, args) -> None:
    code = main(["a.py", "--no-cache", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert "error: a.py: rule NPU103 (" in err and "failed at line 4: KeyError: 'boom'" in err
    assert "All checks passed" not in err


# --- user tables -----------------------------------------------------------------------------
@pytest.mark.parametrize("row, message", [
    ('name = "torch.cuda.synchronize"\nrule = "NPU999"\nsource = "wiki"',
     "[[api]] row 2, key `rule`: 'NPU999' is not a table-driven rule (NPU101, "),
    ('rule = "NPU103"\nsource = "wiki"', "[[api]] row 2, key `name`: missing (it is required)"),
    ('name = "a.b"\nrule = "NPU103"\nreplacement = "a.c"\nfix = "sometimes"\nsource = "wiki"',
     "[[api]] row 2, key `fix`: 'sometimes' is not one of ['safe', 'unsafe', 'display']"),
    ('name = "a.b"\nrule = "NPU103"\nsource = "wiki"\nrename = "a.c"', "[[api]] row 2, key `rename`: unknown key"),
    ('name = "a.b"\nrule = "NPU203"\nsource = "wiki"\nseverity = "info"\nseverity-except-on = ["910B"]',
     "[[api]] row 2, key `severity-except-on.0`: '910B' is not one of ['910A', '310P', 'A2', 'A3', '950DT']"),
    ('name = "a.b"\nrule = "NPU203"\nsource = "wiki"\nseverity-except-on = ["310P"]',
     "[[api]] row 2, key `severity`: missing (`severity-except-on` needs it)"),
])
def test_extra_table_rows_are_validated(project, capsys, row, message) -> None:
    good = '[[api]]\nname = "mylib.kernels"\nrule = "NPU306"\nsource = "wiki"\n\n'
    (project / "team.toml").write_text(good + "[[api]]\n" + row + "\n", encoding="utf-8")
    (project / "pyproject.toml").write_text('[tool.ascend-lsp]\nextra-mappings = ["team.toml"]\n')
    for args in ((), ("--fix",), ("--output-format", "json")):
        code, out, err = run(capsys, "a.py", "--no-cache", *args)
        assert code == 2 and out == "" and err.startswith(f"error: {project / 'team.toml'}: {message}")
        assert err.count("\n") == 1


# --- unknown codes ---------------------------------------------------------------------------
@pytest.mark.parametrize("args, config, message", [
    (("--select", "NPU99"), "", "error: --select: unknown rule code or prefix `NPU99` (did you mean `NPU80`?)"),
    (("--extend-select", "NPU1,XYZ"), "", "error: --extend-select: unknown rule code or prefix `XYZ`;"),
    (("--ignore", "npu1"), "", "error: --ignore: unknown rule code or prefix `npu1` (did you mean `NPU1`?)"),
    ((), 'select = ["NPU999"]', "pyproject.toml: `select`: unknown rule code or prefix `NPU999` (did you mean "
                                "`NPU409`?)"),
    ((), 'extend-select = ["MS9"]', "pyproject.toml: `extend-select`: unknown rule code or prefix `MS9` (did you "
                                   "mean `MS3`?)"),
    ((), '[tool.ascend-lsp.per-file-ignores]\n"tests/*" = ["NPX1"]',
     "pyproject.toml: `per-file-ignores` \"tests/*\": unknown rule code or prefix `NPX1` (did you mean `NPU1`?)"),
    ((), '[tool.ascend-lsp.severity]\nNPU1O1 = "info"', "`severity`: unknown rule code or prefix `NPU1O1`"),
])
def test_unknown_codes_are_rejected_with_a_suggestion(project, capsys, args, config, message) -> None:
    (project / "pyproject.toml").write_text(f"[tool.ascend-lsp]\n{config}\n")
    code, out, err = run(capsys, "a.py", "--no-cache", *args)
    assert code == 2 and out == "" and message in err


def test_known_codes_and_prefixes_are_accepted(project, capsys) -> None:
    code, out, _ = run(capsys, "a.py", "--no-cache", "--select", "NPU103,E", "--output-format", "concise", "-q")
    assert code == 1 and out.splitlines() == [
        "a.py:4:1: NPU103 [*] `torch.cuda.synchronize` is a CUDA API. Use `torch.npu.synchronize`."]


# --- what is read ----------------------------------------------------------------------------
def test_only_regular_files_are_read(project) -> None:
    os.mkfifo(project / "pipe.py")
    (project / "zero.py").symlink_to("/dev/zero")
    (project / "random.py").symlink_to("/dev/urandom")
    started = time.monotonic()
    done = subprocess.run([*LSP_CHECK, ".", "--no-cache", "-q", "--output-format", "concise"], capture_output=True,
                          text=True, timeout=60)
    assert time.monotonic() - started < 30
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert sorted(done.stderr.splitlines()) == [
        "error: pipe.py: not a regular file (a FIFO); only files are read",
        "error: random.py: not a regular file (a device or socket); only files are read",
        "error: zero.py: not a regular file (a device or socket); only files are read",
    ]
    assert done.stdout.splitlines()[0].startswith("a.py:3:19: NPU102")  # the real file is still checked


def test_a_file_over_the_size_limit_is_reported_not_read(project, capsys) -> None:
    (project / "big.py").write_text("x = 1\n" * 100)
    with pytest.raises(SourceError, match=r"^too large to check \(0.0 MiB; the limit is 0 MiB\)$"):
        read_source(str(project / "big.py"), limit=599)
    assert read_source(str(project / "big.py"), limit=600).text == "x = 1\n" * 100
    (project / "huge.py").write_bytes(b"#" * (32 * 1024 * 1024 + 1))
    code, out, err = run(capsys, "huge.py", "a.py", "--no-cache", "-q", "--output-format", "concise")
    assert code == 2 and err == "error: huge.py: too large to check (32.0 MiB; the limit is 32 MiB)\n"
    assert out.startswith("a.py:3:19: NPU102")


def test_a_nul_byte_anywhere_makes_a_binary_file(project, capsys) -> None:
    text = "import torch\n" + "x = 1\n" * 3000 + "\0\n" + "torch.cuda.synchronize()\n"
    (project / "late.py").write_text(text)
    code, out, err = run(capsys, "late.py", "--no-cache", "-q", "--output-format", "concise")
    assert code == 2 and out == "late.py:1:1: E902 binary file (a NUL byte at byte 18013), not Python source\n"
    assert err == "error: late.py: binary file (a NUL byte at byte 18013), not Python source\n"


# --- where output goes -----------------------------------------------------------------------
def test_a_closed_stdout_is_a_note_not_a_traceback(project) -> None:
    (project / "many.py").write_text("import torch\n" + "torch.cuda.synchronize()\n" * 3000)
    shell = f"{' '.join(LSP_CHECK)} many.py --no-cache | head -n 1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("many.py:2:1: NPU103")
    assert done.stderr == "note: the output was cut short (its reader closed the pipe)\n"
    assert done.returncode == 2


@pytest.mark.parametrize("command", [[], ["report"]])
def test_output_file_naming_a_directory(project, capsys, command) -> None:
    (project / "out").mkdir()
    code, out, err = run(capsys, *command, "a.py", "-o", "out", "--no-cache")
    assert code == 2 and err == "error: -o out: is a directory; name a file\n"


def test_an_unwritable_output_file_is_a_message(project, capsys) -> None:
    (project / "file").write_text("")
    code, _, err = run(capsys, "a.py", "-o", "file/report.txt", "--no-cache", "-q")
    assert code == 2 and err.startswith("error: cannot write the output file file/report.txt: ")


def test_an_unreadable_folder_is_reported_and_the_rest_checked(tmp_path) -> None:
    base = tmp_path / "tree"
    (base / "sub" / "locked").mkdir(parents=True)
    (base / "sub" / "a.py").write_text(CUDA)
    (base / "sub" / "locked" / "b.py").write_text(CUDA)
    (base / "sub" / "locked").chmod(0)
    command = [*LSP_CHECK, "sub", "--no-cache", "-q", "--output-format", "concise"]
    env = {**os.environ, "ASCEND_LSP_CACHE_DIR": str(base / ".cache")}
    if os.geteuid() == 0:  # root lists every folder: run it without its capabilities, as the owner only
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: no user here is refused a folder")
        command = [setpriv, "--bounding-set=-all", "--inh-caps=-all", *command]
    try:
        done = subprocess.run(command, cwd=base, capture_output=True, text=True, timeout=120, env=env)
    finally:
        (base / "sub" / "locked").chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "error: sub/locked: cannot list the folder: Permission denied\n"
    assert done.stdout.startswith("sub/a.py:3:19: NPU102")


# --- cost ------------------------------------------------------------------------------------
def test_findings_on_one_huge_line_cost_linear_time_and_memory(project) -> None:
    calls = ", ".join(["torch.cuda.current_device()", '"cuda:0"'] * 8_000)  # each string asks about the list
    (project / "wide.py").write_text(f"import torch\nx = [{calls}]\n")
    (project / "long.py").write_text('import torch\nx = ["' + "a" * 5_000_000 + '", torch.ones(1).cuda()]\n')
    started = time.monotonic()
    wide = check_file("wide.py", Settings(), Options())
    long = check_file("long.py", Settings(), Options())
    elapsed = time.monotonic() - started
    assert len(wide.records) == 16_000 and len(long.records) == 1
    # Each finding keeps a bounded excerpt of its line, not a copy of it.
    assert max(len(r.source_line) for r in wide.records + long.records) <= 2 * EXCERPT + 2
    last = long.records[0]
    assert last.source_line[last.source_col:].startswith("cuda()")
    assert elapsed < 30, f"{elapsed:.1f} s"  # about 2 s here; quadratic was minutes
    started = time.monotonic()
    done = subprocess.run([*LSP_CHECK, "wide.py", "long.py", "--fix", "--unsafe-fixes", "--no-cache", "-q"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and time.monotonic() - started < 60
    assert "cuda" not in (project / "wide.py").read_text()
    assert done.stderr == ""


def test_the_coding_cookie_is_looked_for_in_the_first_two_lines_whatever_their_breaks(project, capsys) -> None:
    # With `\r` breaks, `readline` sees one line: a later comment would be taken for the cookie.
    (project / "cr.py").write_bytes(b"import torch\rx = 1\r# the coding: tuple of sizes\rtorch.cuda.synchronize()\r")
    (project / "latin.py").write_bytes("# -*- coding: latin-1 -*-\rs = 'café'\rtorch.cuda.synchronize()\r"
                                       .encode("latin-1"))
    assert read_source(str(project / "latin.py")).text.startswith("# -*- coding: latin-1 -*-\rs = 'café'\r")
    code, out, err = run(capsys, "cr.py", "--no-cache", "-q", "--output-format", "concise")
    assert code == 1 and err == "" and out.startswith("cr.py:4:1: NPU103")
