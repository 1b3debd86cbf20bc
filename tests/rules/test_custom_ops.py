"""NPU308's project scan (custom_ops.py, kept by project.py's ProjectContext): what the regex
pre-scan reads from C++/CUDA and Python registrations, which folders it skips, the root a
file's project has, and the CLI's cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from ascend_lsp import custom_ops
from ascend_lsp.analysis import analyze
from ascend_lsp.cli.main import main
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.project import ProjectContext, Projects, project_root

FIXTURE = Path(__file__).parent / "fixtures" / "NPU308"
CUDA_OP = ('#include <torch/library.h>\n'
           'TORCH_LIBRARY(proj, m) { m.def("gelu(Tensor x) -> Tensor"); }\n'
           'TORCH_LIBRARY_IMPL(proj, CUDA, m) { m.impl("gelu", &gelu_cuda); }\n')
CALL = "import torch\n\ny = torch.ops.proj.gelu(x)\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_fixture_project_index() -> None:
    index = custom_ops.scan(str(FIXTURE))
    keys = {op: sorted(r.key for r in regs) for op, regs in index.ops.items()}
    assert keys == {
        ("myops", "fused_gelu"): ["CUDA"],
        ("myops", "fused_norm"): ["CPU", "CUDA"],
        ("myops", "scale"): ["CUDA", "default"],
        ("myops", "pack"): ["CUDA", "default"],
        ("myops", "rope"): ["CUDA"],
        ("myops", "topk_fast"): ["CUDA", "CompositeImplicitAutograd"],
        ("myops", "dropout_fast"): ["CUDA", "PrivateUse1"],
        ("myops", "gather_rows"): ["Meta"],
        ("myops", "stable_op"): ["CUDA"],
        ("*", "silu_and_mul"): ["CUDA"],
        ("_C_npu", "silu_and_mul"): ["PrivateUse1"],
        ("pyops", "bias_add"): ["CUDA"],
        ("pyops", "clip"): ["CUDA"],
        ("pyops", "everywhere"): ["default"],
        ("pyops", "two"): ["CUDA", "NPU"],
        ("pyops", "clamp"): ["CUDA", "NPU"],
        ("libops", "swap"): ["CUDA"],
        ("pyops", "method_kernel"): ["CUDA", "NPU"],
    }
    assert index.where(index.verdict("myops", "fused_gelu").cuda) == "csrc/kernels.cu:4"


def test_cuda_and_cpu_kernels_are_a_warning() -> None:
    text = (FIXTURE / "calls.py").read_text(encoding="utf-8")
    settings = Settings(select=("NPU308",), root=str(FIXTURE))
    analysis = analyze(text, settings, str(FIXTURE / "calls.py"), project=ProjectContext(str(FIXTURE)))
    found = {f.range.start_line + 1: f.severity for f in analysis.findings}
    assert found[8] == Severity.WARNING  # fused_norm: CPU and CUDA kernels
    assert {line for line, severity in found.items() if severity == Severity.ERROR} == {5, 6, 7, 9, 10, 18, 26, 31}


def test_vendored_excluded_and_large_files_are_skipped(tmp_path: Path) -> None:
    write(tmp_path / "third_party" / "lib" / "ops.cu", CUDA_OP)
    write(tmp_path / "build" / "ops.cu", CUDA_OP)
    write(tmp_path / "gen" / "ops.cu", CUDA_OP)
    write(tmp_path / "big" / "ops.cu", CUDA_OP + "//" + "x" * custom_ops.MAX_FILE_BYTES)
    assert custom_ops.scan(str(tmp_path), ("gen",)).ops == {}
    write(tmp_path / "csrc" / "ops.cu", CUDA_OP)
    assert list(custom_ops.scan(str(tmp_path), ("gen",)).ops) == [("proj", "gelu")]


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "a_pipe.py")  # opening a FIFO for reading waits for a writer
    (tmp_path / "b_zero.cu").symlink_to("/dev/zero")
    write(tmp_path / "csrc" / "ops.cu", CUDA_OP)
    done = subprocess.run([sys.executable, "-c", "import sys; from ascend_lsp import custom_ops; "
                           "print(sorted(custom_ops.scan(sys.argv[1]).ops))", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout == "[('proj', 'gelu')]\n", done.stderr


def test_root_is_the_nearest_project_folder(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "")
    file = write(tmp_path / "pkg" / "sub" / "a.py", CALL)
    assert project_root(str(file), Settings()) == str(tmp_path.resolve())
    assert project_root(str(file), Settings(root="/elsewhere")) == "/elsewhere"
    assert project_root(None, Settings()) is None
    (tmp_path / "link.py").symlink_to(file)  # a link belongs to the project it is in
    assert project_root(str(tmp_path / "link.py"), Settings()) == str(tmp_path.resolve())
    (tmp_path / "pkg" / "zero.py").symlink_to("/dev/zero")
    assert project_root(str(tmp_path / "pkg" / "zero.py"), Settings()) == str(tmp_path.resolve())
    # a workspace folder (the server's) is a root, with no marker in it
    assert project_root(str(file), Settings(), {str((tmp_path / "pkg").resolve())}) == str((tmp_path / "pkg").resolve())


def test_one_project_per_root_its_index_kept_until_rescanned(tmp_path: Path) -> None:
    write(tmp_path / "setup.py", "")
    file = write(tmp_path / "a.py", CALL)
    settings = Settings(select=("NPU308",))
    projects = Projects()
    project = projects.for_path(str(file), settings)
    assert project is projects.for_path(str(tmp_path / "sub" / "b.py"), settings)
    assert project.root == str(tmp_path.resolve())
    assert analyze(CALL, settings, str(file), project=project).findings == []
    write(tmp_path / "csrc" / "ops.cu", CUDA_OP)
    assert analyze(CALL, settings, str(file), project=project).findings == []  # the index of this project is kept
    project.rescan_ops()
    assert [f.code for f in analyze(CALL, settings, str(file), project=project).findings] == ["NPU308"]
    assert project.registers_in(str((tmp_path / "csrc" / "ops.cu").resolve()))
    assert not project.registers_in(str(file))
    assert custom_ops.registers_ops(CUDA_OP) and not custom_ops.registers_ops(CALL)


def test_unsaved_document_and_disabled_rule(tmp_path: Path) -> None:
    assert analyze(CALL, Settings(select=("NPU308",)), None).findings == []  # no project
    project = ProjectContext(str(tmp_path))
    assert project.ops_digest(replace(Settings(), select=("NPU1",))) == ""
    write(tmp_path / "csrc" / "ops.cu", CUDA_OP)  # found: nothing was scanned before it was written
    assert project.ops_digest(Settings(select=("NPU308",))) == project.ops.digest()
    assert list(project.ops.ops) == [("proj", "gelu")]


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASCEND_LSP_CACHE_DIR", str(tmp_path / ".table-cache"))
    return tmp_path


def test_cli_cache_follows_the_registrations(project: Path, capsys) -> None:
    """A cached result of a file that calls an op is not reused once a C++ file of the
    project gives the op an NPU kernel."""
    write(project / "pyproject.toml", '[tool.ascend-lsp]\nselect = ["NPU308"]\n')
    write(project / "a.py", CALL)
    ops = write(project / "csrc" / "ops.cu", CUDA_OP)

    def codes() -> list[str]:
        assert main(["a.py", "--output-format", "json"]) in (0, 1)
        return [f["code"] + ":" + f["message"].partition("(")[2].partition(")")[0]
                for f in json.loads(capsys.readouterr().out)]

    assert codes() == ["NPU308:csrc/ops.cu:3"]
    assert codes() == ["NPU308:csrc/ops.cu:3"]  # from the cache
    ops.write_text(CUDA_OP + 'TORCH_LIBRARY_IMPL(proj, PrivateUse1, m) { m.impl("gelu", &gelu_npu); }\n',
                   encoding="utf-8")
    assert codes() == []
