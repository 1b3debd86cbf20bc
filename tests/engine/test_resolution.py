"""Name resolution through imports, by scope; shapes; strings."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.walk import module_context


def codes(source: str, select: str = "NPU1") -> list[tuple[int, str]]:
    analysis = analyze(textwrap.dedent(source), Settings(select=(select,)))
    assert not analysis.errors
    return [(f.range.start_line + 1, f.code) for f in analysis.findings]


@pytest.mark.parametrize("source", [
    "import torch as t\nt.cuda.synchronize()\n",
    "import torch.cuda\ntorch.cuda.synchronize()\n",
    "import torch.nn\ntorch.cuda.synchronize()\n",
    "from torch import cuda as c\nc.synchronize()\n",
    "from torch.cuda import synchronize\nsynchronize()\n",
    "import torch\ndef f():\n    torch.cuda.synchronize()\n",
    "import torch\nclass A:\n    def m(self):\n        return torch.cuda.synchronize()\n",
    "def f():\n    import torch\n    torch.cuda.synchronize()\n",
    "try:\n    import torch\nexcept ImportError:\n    torch = None\ntorch.cuda.synchronize()\n",
    "import torch\nfs = [torch.cuda.synchronize for _ in range(2)]\n",
    "import torch\ndef f():\n    global torch\n    torch = None\n    torch.cuda.synchronize()\n",
])
def test_resolves_to_torch_cuda(source: str) -> None:
    assert codes(source, "NPU103")[-1][1] == "NPU103"


@pytest.mark.parametrize("source", [
    "def f(torch):\n    torch.cuda.synchronize()\n",
    "import torch\ndef f():\n    torch.cuda.synchronize()\n    torch = object()\n",
    "import torch\ndef f(*, torch):\n    return torch.cuda.synchronize()\n",
    "import torch\ng = lambda torch: torch.cuda.synchronize()\n",
    "import torch\nxs = [torch.cuda.synchronize() for torch in range(3)]\n",
    "torch.cuda.synchronize()\n",
    "from . import torch\ntorch.cuda.synchronize()\n",
    "import torch\nclass A:\n    torch = None\n    x = 1\nprint('torch.cuda.synchronize()')\n",
])
def test_not_an_api(source: str) -> None:
    assert codes(source, "NPU103") == []


def test_class_scope_does_not_leak_into_methods() -> None:
    source = """
        import torch
        class A:
            torch = None
            def m(self):
                return torch.cuda.synchronize()
    """
    assert codes(source, "NPU103") == [(6, "NPU103")]


def test_strings_in_messages_are_prose() -> None:
    source = """
        import logging, warnings
        log = logging.getLogger()
        log.info("cuda")
        warnings.warn("cuda:0")
        parser.add_argument("--device", default="cuda", help="cuda or cpu")
        raise ValueError(f"cuda:{0} failed")
    """
    assert codes(source, "NPU101") == [(6, "NPU101")]


def test_fstring_and_torch_device_with_index() -> None:
    source = """
        import torch
        rank = 0
        a = torch.device(f"cuda:{rank}")
        b = torch.device("cuda", rank)
        c = f"cuda:{rank}:{rank}"
    """
    assert codes(source, "NPU101") == [(4, "NPU101"), (5, "NPU101")]


def test_buffer_advice_needs_a_torch_file() -> None:
    """MS232's porting advice is for PyTorch code: another framework's register_buffer is not."""
    source = 'class BN({base}):\n    def __init__(self):\n        self.register_buffer("running_mean", None)\n'

    def found(header: str, base: str) -> list[str]:
        settings = Settings(target="mindspore", select=("MS232",))
        return [f.code for f in analyze(header + source.format(base=base), settings).findings]

    assert found("import torch\n", "torch.nn.Module") == ["MS232"]
    assert found("from .base import Module\n", "Module") == []


def test_the_engine_takes_its_rules_as_an_argument() -> None:
    """No rule module is imported by the engine: a caller passes the registry, and a registry
    with other rules gets their findings."""
    import subprocess
    import sys

    from ascend_lsp.engine.analyzer import analyze_with
    from ascend_lsp.engine.registry import HANDLERS, RuleSet
    from ascend_lsp.rules import RULE_SET

    code = "import sys, ascend_lsp.engine.analyzer, ascend_lsp.engine.fixes; " \
           "assert not [m for m in sys.modules if m.startswith('ascend_lsp.rules')], sorted(sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0

    only_npu102 = RuleSet({"NPU102": RULE_SET.rules["NPU102"]}, HANDLERS)

    text = "import torch\nx = torch.ones(1).cuda()\ntorch.cuda.synchronize()\n"
    assert {f.code for f in analyze_with(text, Settings(), rules=RULE_SET).findings} == {"NPU102", "NPU103"}
    assert [f.code for f in analyze_with(text, Settings(), rules=only_npu102).findings] == ["NPU102"]


def test_handlers_with_names_see_only_those() -> None:
    """An attribute or reference handler that names what it reads is called for those names
    alone (an attribute's name, the last part of a reference's qualified name), one without
    names for every event, each in the registry's order."""
    from ascend_lsp.engine.analyzer import analyze_with

    from ..rulesets import Handlers

    seen: list[tuple[str, str]] = []

    def every(checker, node, attr, call):
        seen.append(("every", attr))

    def named(checker, node, attr, call):
        seen.append(("named", attr))

    def every_reference(checker, ref):
        seen.append(("every", ref.qualname))

    def named_reference(checker, ref):
        seen.append(("named", ref.qualname))

    named.names = lambda tables: {"to", "shape"}  # type: ignore[attr-defined]
    named_reference.names = {"synchronize"}  # type: ignore[attr-defined]
    recording = Handlers(attribute=[named, every], reference=[named_reference, every_reference])

    analyze_with("x.to(0)\ny = x.shape\nz = x.weight\n", Settings(), rules=recording)
    assert seen == [("named", "to"), ("every", "to"), ("named", "shape"), ("every", "shape"), ("every", "weight")]
    seen.clear()
    analyze_with("import torch\nfrom torch.cuda import synchronize as s\ntorch.cuda.synchronize()\ns()\n"
                 "torch.ones(1)\n", Settings(), rules=recording)
    assert seen == [("named", "torch.cuda.synchronize"), ("every", "torch.cuda.synchronize"),
                    ("named", "torch.cuda.synchronize"), ("every", "torch.cuda.synchronize"),
                    ("every", "torch.ones")]


def test_base_handlers_see_the_resolved_bases_of_classes_alone() -> None:
    """A "base" handler gets the references that are a class's base, top-level or nested,
    and no other reference; reference handlers still get those too."""
    from ascend_lsp.engine.analyzer import analyze_with

    from ..rulesets import Handlers

    bases: list[tuple[str, str, int]] = []
    references: list[str] = []

    def on_base(checker, ref):
        bases.append((ref.call.name, ref.qualname, ref.node.lineno))

    def on_reference(checker, ref):
        references.append(ref.qualname)

    text = ("import torch.nn as nn\nfrom abc import ABC\n\n\n"
            "class Block(nn.Module, ABC):\n    def forward(self, x):\n        return nn.functional.relu(x)\n\n\n"
            "def make():\n    class Local(nn.Module):\n        pass\n    return Local\n\n\n"
            "class Plain(Unknown):\n    pass\n")
    analyze_with(text, Settings(), rules=Handlers(base=[on_base], reference=[on_reference]))
    assert bases == [("Block", "torch.nn.Module", 5), ("Block", "abc.ABC", 5), ("Local", "torch.nn.Module", 11)]
    assert references == ["torch.nn.Module", "abc.ABC", "torch.nn.functional.relu", "torch.nn.Module"]


@pytest.mark.parametrize(("imports", "module", "expected"), [
    ("import msprobe.pytorch", "msprobe", True),
    ("from msprobe.pytorch import seed_all", "msprobe.pytorch", True),
    ("import msprobe", "msprobe.pytorch", False),
    ("import msprobe_extra", "msprobe", False),
    ("from . import msprobe", "msprobe", False),
    ("if x:\n    import torch_npu.contrib as c", "torch_npu", True),
])
def test_imports_module_is_a_module_or_a_package_a_top_level_import_names(imports, module, expected) -> None:
    assert module_context(ast.parse(imports)).imports_module(module) is expected
