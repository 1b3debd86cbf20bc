"""lsp-check's result cache keeps what a project's files say (the operators it registers, the
versions it pins, what its Python files say of its flags and calls) while none of the files
each is read from changed, and a run lists the project's files once."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_lsp import custom_ops
from ascend_lsp.cli.cache import Cache, settings_key
from ascend_lsp.engine.config import Settings
from ascend_lsp.project import ProjectContext, Projects

CUDA_OP = ('TORCH_LIBRARY(proj, m) { m.def("gelu(Tensor x) -> Tensor"); }\n'
           'TORCH_LIBRARY_IMPL(proj, CUDA, m) { m.impl("gelu", &gelu_cuda); }\n')
FLAG = "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    compile_model: bool = False\n"

# the reading: (the files, a file changed so that what they say changes, a new file that says
# something more, what reads them, which must not run while none changed)
READINGS = {
    "operators": ({"csrc/ops.cu": CUDA_OP}, ("csrc/ops.cu", CUDA_OP.replace("gelu", "silu")),
                  ("kernels/more.cpp", CUDA_OP.replace("proj", "more")), "scan"),
    "pins": ({"requirements.txt": "torch==2.1.0\n"}, ("requirements.txt", "torch==2.4.0\n"),
             ("requirements-dev.txt", "numpy==1.26.4\n"), "read_pins"),
    "python": ({"config.py": FLAG, "train.py": "build(Config())\n"},
               ("train.py", "build(Config(compile_model=True))\n"),
               ("other.py", FLAG.replace("Config", "Other").replace("compile_model", "use_fp8")), "read_flags"),
}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def key_of(root: Path) -> str:
    """A run's key: a fresh cache object and project, as the next lsp-check run has."""
    cache = Cache(root)
    key = settings_key(Settings(), ProjectContext(str(root), fixed=True), cache)
    cache.save()
    return key


@pytest.mark.parametrize("reading", sorted(READINGS))
def test_a_reading_is_kept_until_one_of_its_files_changes(reading: str, tmp_path: Path, monkeypatch) -> None:
    files, changed, added, reader = READINGS[reading]
    for name, text in files.items():
        write(tmp_path / name, text)
    key = key_of(tmp_path)

    def unread(*args, **kwargs):
        raise AssertionError(f"{reader} ran again")

    with monkeypatch.context() as patched:  # nothing changed: the kept digest, no file read
        patched.setattr(f"ascend_lsp.project.{reader}", unread)
        assert key_of(tmp_path) == key
    write(tmp_path / changed[0], changed[1])  # what the file says changed: read again, another key
    changed_key = key_of(tmp_path)
    assert changed_key != key
    write(tmp_path / added[0], added[1])  # a new file counts too
    assert key_of(tmp_path) not in (key, changed_key)


def test_a_run_lists_the_project_s_files_once(tmp_path: Path, monkeypatch) -> None:
    for files, _, _, _ in READINGS.values():
        for name, text in files.items():
            write(tmp_path / name, text)
    walks: list[str] = []
    walk = custom_ops.project_files

    def counted(root, exclude, wanted):
        walks.append(root)
        return walk(root, exclude, wanted)

    monkeypatch.setattr("ascend_lsp.project.project_files", counted)
    project = Projects(fixed=True).for_path(str(tmp_path / "train.py"), Settings())
    assert project.fixed and not ProjectContext(str(tmp_path)).fixed
    project.ops_digest(Settings())
    project.pins_digest()
    project.python_digest()
    assert list(project.ops.ops) == [("proj", "gelu")]
    assert project.pin("torch") == "==2.1.0"
    assert project.flags.default_off("compile_model") is not None
    assert walks == [str(tmp_path.resolve())]
