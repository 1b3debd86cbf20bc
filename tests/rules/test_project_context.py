"""The versions a project pins (project.py's ProjectContext.pin), read once from its real
packaging files: requirements files (nested too), pyproject.toml, setup.py, setup.cfg,
environment.yml; never through a link out of the project."""

from __future__ import annotations

import pickle
from pathlib import Path

from ascend_lsp.project import ProjectContext


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_every_packaging_file_pins(tmp_path: Path) -> None:
    write(tmp_path / "requirements.txt", "# the training image\ntorch==2.1.0+cpu  # CPU wheel\nnumpy\n")
    write(tmp_path / "requirements" / "npu.txt", "torch-npu>=2.1.0,<2.2\n")
    write(tmp_path / "pyproject.toml", '[build-system]\nrequires = ["setuptools==69.0"]\n'
                                       '[project]\nname = "p"\ndependencies = ["transformers~=4.40"]\n'
                                       '[project.optional-dependencies]\nfast = ["Accelerate==0.30.0"]\n')
    write(tmp_path / "setup.py", 'from setuptools import setup\n\n'
                                 'setup(name="p", install_requires=["safetensors>=0.4", "tqdm"])\n')
    write(tmp_path / "setup.cfg", "[options]\ninstall_requires =\n    einops==0.8.0\n")
    write(tmp_path / "environment.yml", "dependencies:\n  - python=3.10\n  - pip:\n    - sentencepiece==0.2.0\n")
    write(tmp_path / "docs" / "notes.txt", "torch==0.1\n")  # not a requirements file
    project = ProjectContext(str(tmp_path))
    assert project.pin("torch") == "==2.1.0+cpu"
    assert project.pin("torch_npu") == project.pin("Torch-NPU") == ">=2.1.0,<2.2"
    assert project.pin("transformers") == "~=4.40"
    assert project.pin("accelerate") == "==0.30.0"
    assert project.pin("safetensors") == ">=0.4"
    assert project.pin("einops") == "==0.8.0"
    assert project.pin("python") == "=3.10"  # conda's spelling, as written
    assert project.pin("sentencepiece") == "==0.2.0"
    assert project.pin("numpy") is None and project.pin("tqdm") is None  # named without a version
    assert project.pin("setuptools") is None  # the build's requirement, not the project's
    assert pickle.loads(pickle.dumps(project)).pin("torch") == "==2.1.0+cpu"  # lsp-check's workers get them


def test_the_top_folder_wins_and_pins_are_read_once(tmp_path: Path) -> None:
    write(tmp_path / "requirements.txt", "torch==2.1.0\n")
    write(tmp_path / "examples" / "requirements.txt", "torch==1.13.1\n")
    project = ProjectContext(str(tmp_path))
    assert project.pin("torch") == "==2.1.0"
    write(tmp_path / "requirements.txt", "torch==2.4.0\n")
    assert project.pin("torch") == "==2.1.0"


def test_a_link_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "requirements.txt", "torch==2.1.0\n")
    inside = write(tmp_path / "project" / "pinned" / "npu.lock", "torch-npu==2.1.0\n")  # read through the link only
    (tmp_path / "project" / "requirements.txt").symlink_to(outside)
    (tmp_path / "project" / "requirements-npu.txt").symlink_to(inside)  # a link inside it is read
    project = ProjectContext(str(tmp_path / "project"))
    assert project.pin("torch") is None
    assert project.pin("torch-npu") == "==2.1.0"


def test_a_project_without_packaging_files_pins_nothing(tmp_path: Path) -> None:
    write(tmp_path / "train.py", "import torch\n")
    assert ProjectContext(str(tmp_path)).pin("torch") is None
