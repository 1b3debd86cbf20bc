"""The worker ships as one script built from runner/worker/: it runs a job where ascend_lsp
cannot be imported, and the bundler refuses a module that would break that."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lsp.runner import Job
from ascend_lsp.runner.bundle import BundleError, bundle
from ascend_lsp.runner.command import BOOTSTRAP, worker_source_line
from ascend_lsp.runner.job import PROTOCOL

SERVER = Path(__file__).resolve().parents[2] / "server"
SOURCE = """
import torch

def doubled():
    torch.manual_seed(0)
    return {"y": torch.randn(3, 4) * 2, "n": 7}
"""
# Any `import ascend_lsp` in the script fails, whatever the interpreter has installed.
WITHOUT_ASCEND_LSP = "import sys; sys.modules['ascend_lsp'] = None; "


def answers(argv: list[str], lines: list[bytes], cwd: Path, env: dict | None = None) -> list[dict]:
    done = subprocess.run(argv, input=b"".join(lines), capture_output=True, cwd=cwd, env=env, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.splitlines()]


def job_line(tmp_path: Path) -> bytes:
    path = tmp_path / "model.py"
    path.write_text(SOURCE, encoding="utf-8")
    return (json.dumps(Job(path=str(path), function="doubled", target="cpu").to_wire()) + "\n").encode()


@pytest.mark.torch
def test_the_shipped_script_runs_a_job_in_an_empty_folder_without_ascend_lsp(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    empty = tmp_path / "empty"
    empty.mkdir()
    hello, *_, result = answers([sys.executable, "-I", "-c", WITHOUT_ASCEND_LSP + BOOTSTRAP],
                                [worker_source_line(), job_line(tmp_path)], cwd=empty)
    assert hello["type"] == "hello" and hello["protocol"] == PROTOCOL
    assert result["type"] == "result" and result["status"] == "ok", result
    assert [(o["path"], o["kind"]) for o in result["outputs"]] == [("out['y']", "float"), ("out['n']", "exact")]
    assert [o["metrics"]["max_abs"] for o in result["outputs"]] == [0.0, 0.0]


@pytest.mark.torch
def test_an_installed_worker_runs_the_same_script(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    hello, *_, result = answers([sys.executable, "-m", "ascend_lsp.runner.worker"], [job_line(tmp_path)],
                                cwd=tmp_path, env=env)
    assert hello["protocol"] == PROTOCOL and result["type"] == "result" and result["status"] == "ok"
    assert [o["metrics"]["max_abs"] for o in result["outputs"]] == [0.0, 0.0]


def package(tmp_path: Path, modules: dict[str, str]) -> Path:
    folder = tmp_path / "worker"
    folder.mkdir()
    (folder / "__init__.py").write_text('"""The worker."""\n')
    for name, text in modules.items():
        (folder / f"{name}.py").write_text(text)
    return folder


def test_the_script_is_the_modules_in_import_order_without_their_sibling_imports(tmp_path):
    folder = package(tmp_path, {
        "serve": '"""Loop."""\nfrom __future__ import annotations\n\nimport os\n\nfrom .values import ONE\n\n\n'
                 'def main():\n    return ONE + len(os.sep)\n\n\nif __name__ == "__main__":\n    main()\n',
        "values": '"""Values."""\nfrom __future__ import annotations\n\nimport os\n\nONE = 1\n'})
    assert bundle(folder) == ('"""The worker."""\nfrom __future__ import annotations\n\n\n'
                              '# -------------------- worker/values.py\n\nimport os\n\nONE = 1\n\n\n'
                              '# -------------------- worker/serve.py\n\nimport os\n\n\n\ndef main():\n'
                              '    return ONE + len(os.sep)\n\n\nif __name__ == "__main__":\n    main()\n')


@pytest.mark.parametrize(("modules", "reason"), [
    ({"serve": "def main():\n    from ascend_lsp.runner import job\n"},
     "serve.py:2: imports ascend_lsp, which a worker's host may not have"),
    ({"serve": "from .a import f\nfrom .b import g\n", "a": "def f():\n    pass\n", "b": "def f():\n    pass\n"},
     "f is defined in a.py and in b.py: the script has one namespace"),
    ({"serve": "from .a import f\n", "a": "import json as f\n"},
     "serve.py imports f from a.py, which does not define it"),
    ({"serve": "import torch\n"},
     "serve.py:1: imports torch at its top: only the standard library may be imported before a job needs it "
     "(import torch in the function that uses it)"),
    ({"serve": "from . import a\n", "a": ""},
     "serve.py:1: a worker module imports its siblings as `from .module import name`, at its top (the script has "
     "no package to import from)"),
    ({"serve": "", "a": "X = 1\n"}, "a.py not imported by serve.py, directly or not"),
    ({"serve": "from .a import X\n", "a": "from .serve import Y\nX = 1\n"}, "import circle: serve → a → serve"),
], ids=["ascend_lsp", "same-name", "missing-name", "third-party-at-top", "package-import", "unused", "circle"])
def test_the_bundler_refuses_a_module_that_breaks_the_script(tmp_path, modules, reason):
    with pytest.raises(BundleError) as refused:
        bundle(package(tmp_path, modules))
    assert str(refused.value) == reason
