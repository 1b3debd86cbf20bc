"""The modules a project imports only under a test of an option it leaves off (opt_in_modules.py,
ProjectContext.opt_in): read from real files of a package shaped like ChatTTS's, whose vendored
vLLM engine is imported only where `use_vllm` is turned on; their findings are info, naming the
test; an import elsewhere that runs by default keeps them warnings."""

from __future__ import annotations

from pathlib import Path

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.project import ProjectContext

FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\n',
    "pkg/__init__.py": "from .core import Chat\n",
    "pkg/core.py": '''from .model.gpt import GPT
from .utils import sync


class Chat:
    def load(
        self,
        use_vllm=False,
    ):
        self.gpt = GPT(use_vllm=use_vllm)

    def infer(self):
        gpt = self.gpt
        if gpt.is_vllm:
            # the engine's own parameters
            from .model.velocity import SamplingParams

            return SamplingParams()
        else:
            from .model import fallback
        sync()
        return fallback
''',
    "pkg/utils.py": "import torch\n\n\ndef sync():\n    torch.cuda.synchronize()\n",
    "pkg/model/__init__.py": "from .gpt import GPT\n",
    "pkg/model/fallback.py": "import torch\n\n\ndef run():\n    torch.cuda.synchronize()\n",
    "pkg/model/gpt.py": '''import platform

import torch


class GPT:
    def __init__(self, use_vllm=False):
        self.is_vllm = use_vllm

    def load(self):
        if self.is_vllm and platform.system() == "Linux":
            from .velocity import LLM

            self.llm = LLM()
            return
        if self.is_vllm:
            torch.cuda.synchronize()
''',
    "pkg/model/velocity/__init__.py": "from .llm import LLM\nfrom .sampling import SamplingParams\n",
    "pkg/model/velocity/llm.py": '''import torch

from ..shared import helper
from .runner import Runner


class LLM:
    def __init__(self):
        torch.cuda.synchronize()
        self.runner = Runner(helper)
''',
    "pkg/model/velocity/runner.py": '''import torch


class Runner:
    def __init__(self, helper):
        self.device = torch.cuda.current_device()
''',
    "pkg/model/velocity/sampling.py": "class SamplingParams:\n    pass\n",
    "pkg/model/shared.py": "import torch\n\n\ndef helper():\n    return torch.cuda.current_device()\n",
    "pkg/model/cache.py": "from .shared import helper\n",
}
VELOCITY = ("pkg/model/velocity/__init__.py", "pkg/model/velocity/llm.py", "pkg/model/velocity/runner.py",
            "pkg/model/velocity/sampling.py")


def project(tmp_path: Path, files: dict[str, str] = FILES) -> ProjectContext:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return ProjectContext(str(tmp_path))


def opt_in(context: ProjectContext, tmp_path: Path) -> dict[str, tuple[str, str, str]]:
    found = {}
    for name in sorted({*FILES, *VELOCITY}):
        why = context.opt_in(str(tmp_path / name))
        if why is not None:
            found[name] = (why.test, why.site, why.option)
    return found


def test_a_package_imported_only_under_an_option_left_off_is_opt_in(tmp_path: Path) -> None:
    context = project(tmp_path)
    why = ("gpt.is_vllm", "pkg/core.py:16",
           "the project sets `is_vllm` from `use_vllm`, which it gives no value but False (pkg/core.py:8)")
    # the package, and what it alone imports; not `shared` (cache.py imports it too), not the `else`'s `fallback`,
    # not `utils` (imported at the top)
    assert opt_in(context, tmp_path) == {name: why for name in VELOCITY}


def test_its_findings_are_info_and_say_why(tmp_path: Path) -> None:
    context = project(tmp_path)
    settings = Settings(select=("NPU1",))
    llm = tmp_path / "pkg/model/velocity/llm.py"
    findings = analyze(FILES["pkg/model/velocity/llm.py"], settings, str(llm), project=context).findings
    assert [(f.code, f.range.start_line + 1, f.severity) for f in findings] == [("NPU103", 9, Severity.INFO)]
    assert findings[0].message.endswith(
        "(In a module the project imports only under `gpt.is_vllm` (pkg/core.py:16), and the project sets `is_vllm` "
        "from `use_vllm`, which it gives no value but False (pkg/core.py:8): it runs only where the user turns that "
        "on; on an NPU host leave it off, or change this first.)")
    for name in ("pkg/model/shared.py", "pkg/utils.py", "pkg/model/fallback.py"):
        kept = analyze(FILES[name], settings, str(tmp_path / name), project=context).findings
        assert [f.severity for f in kept] == [Severity.WARNING], name


def test_code_under_a_flag_set_from_one_left_off_is_info(tmp_path: Path) -> None:
    context = project(tmp_path)
    gpt = tmp_path / "pkg/model/gpt.py"
    findings = analyze(FILES["pkg/model/gpt.py"], Settings(select=("NPU1",)), str(gpt), project=context).findings
    assert [(f.code, f.range.start_line + 1, f.severity) for f in findings] == [("NPU103", 17, Severity.INFO)]
    assert findings[0].message.endswith(
        "(Under `if self.is_vllm:`, and the project sets `is_vllm` from `use_vllm`, which it gives no value but False "
        "(pkg/model/gpt.py:7): it runs only where the user turns that flag on; on an NPU host leave it off, or change "
        "this first.)")


def test_turned_on_or_imported_by_default_it_is_not(tmp_path: Path) -> None:
    turned_on = {**FILES, "scripts/serve.py": "from pkg import Chat\n\nChat().load(use_vllm=True)\n"}
    assert opt_in(project(tmp_path / "on", turned_on), tmp_path / "on") == {}
    imported = {**FILES, "tests/test_llm.py": "from pkg.model.velocity import LLM\n\n\ndef test_llm():\n    LLM()\n"}
    assert opt_in(project(tmp_path / "imported", imported), tmp_path / "imported") == {}
    # a module with a `__main__` block runs by default, and what it imports with it
    main = {**FILES, "pkg/model/velocity/runner.py": FILES["pkg/model/velocity/runner.py"]
            + '\n\nif __name__ == "__main__":\n    Runner(None)\n'}
    assert set(opt_in(project(tmp_path / "main", main), tmp_path / "main")) == set(VELOCITY) - {
        "pkg/model/velocity/runner.py"}
    # a test of a flag the importing file computes is not known to be off: the import under it runs by default
    computed = {**FILES, "pkg/core.py": FILES["pkg/core.py"].replace("gpt = self.gpt\n",
                                                                      "gpt = self.gpt\n        gpt.is_vllm = probe()\n")}
    assert opt_in(project(tmp_path / "computed", computed), tmp_path / "computed") == {}


def test_what_it_says_is_in_the_cache_key(tmp_path: Path) -> None:
    context = project(tmp_path)
    before = context.python_digest()
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_llm.py").write_text("from pkg.model.velocity import LLM\n", encoding="utf-8")
    assert context.reread_python()
    assert context.python_digest() != before
    assert context.opt_in(str(tmp_path / "pkg/model/velocity/llm.py")) is None


def test_whether_the_project_imports_transfer_to_npu_is_read_and_keyed(tmp_path: Path) -> None:
    """NPU404's premise (engine/checker.py, Rule.transfer_only): read with the other facts of the Python files,
    in either spelling of the import, and part of the result cache's key."""
    context = project(tmp_path)
    assert not context.imports_transfer_to_npu  # `transfer_to_npu` in a comment or a string is no import
    before = context.python_digest()
    for spelling in ("from torch_npu.contrib import transfer_to_npu  # noqa: F401\n",
                     "import torch_npu.contrib.transfer_to_npu\n"):
        (tmp_path / "pkg/npu.py").write_text("import torch_npu\n" + spelling, encoding="utf-8")
        assert context.reread_python()
        assert context.imports_transfer_to_npu
        assert context.python_digest() != before
        (tmp_path / "pkg/npu.py").write_text("# see transfer_to_npu\nMODE = 'transfer_to_npu'\n", encoding="utf-8")
        assert context.reread_python()
        assert not context.imports_transfer_to_npu


def test_a_provisional_project_unread_may_import_transfer_to_npu_and_has_no_module_opt_in(tmp_path: Path) -> None:
    """Before the language server has read a project's Python files, nothing lowers a finding: NPU404
    keeps its warning (transfer_to_npu may be imported), and no module is taken as opt-in."""
    project(tmp_path)
    provisional = ProjectContext(str(tmp_path), provisional=True)
    assert provisional.imports_transfer_to_npu
    assert provisional.opt_in(str(tmp_path / "pkg/model/velocity/llm.py")) is None
    provisional.read_python()
    assert not provisional.imports_transfer_to_npu
    assert provisional.opt_in(str(tmp_path / "pkg/model/velocity/llm.py")) is not None


def test_lines_break_at_cr_and_crlf_too(tmp_path: Path) -> None:
    """An importing file written with `\\r` or `\\r\\n` line breaks says the same (its site's line too)."""
    for ending in ("\r", "\r\n"):
        files = {**FILES, "pkg/core.py": FILES["pkg/core.py"].replace("\n", ending)}
        folder = tmp_path / repr(ending).strip("'")
        context = project(folder, files)
        assert set(opt_in(context, folder)) == set(VELOCITY)
        assert context.opt_in(str(folder / "pkg/model/velocity/llm.py")).option.endswith("(pkg/core.py:8)")
        assert context.opt_in(str(folder / "pkg/model/velocity/llm.py")).site == "pkg/core.py:16"


def test_a_commented_out_import_of_transfer_to_npu_is_none(tmp_path: Path) -> None:
    context = project(tmp_path)
    (tmp_path / "pkg/npu.py").write_text("import torch_npu\n# from torch_npu.contrib import transfer_to_npu\n",
                                         encoding="utf-8")
    context.reread_python()
    assert not context.imports_transfer_to_npu
