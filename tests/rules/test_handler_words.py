"""`handles(..., words=)`: an assign, function or loop handler runs only for a statement that
names one of its words (engine.checker.WordGates); the findings are those of running it for
every statement."""

from __future__ import annotations

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine import checker
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.analyzer import analyze_with
from ascend_lsp.rules import RULE_SET
from ascend_lsp.engine.registry import handles

from ..rulesets import Handlers

ADVICE = Settings(select=("NPU", "NPU6", "NPU7"))
# Each case reaches its API under another name, through a local function, or in a file whose
# other statements lack the words: the words must still be seen.
CASES = [
    ("NPU610", "from torch.utils.data import DataLoader as Loader\n\nloader = Loader(ds)\n"
               "for batch in loader:\n    loss = model(batch)\n    loss.backward()\n    opt.step()\n"),
    ("NPU614", "from os import environ as env\n\nenv['ASCEND_LAUNCH_BLOCKING'] = '1'\n"),
    ("NPU611", "import torch\n\nfor x in data:\n    loss = model(x)\n    loss.backward()\n    print(loss.item())\n"),
    ("NPU703", "import torch.backends.cudnn as cudnn\n\ncudnn.deterministic = True\n"),
    ("NPU605", "import torch\n\n\ndef attend(q, k, v):\n    w = torch.softmax(q @ k.transpose(-1, -2), dim=-1)\n"
               "    return w @ v\n"),
    ("NPU605", "import torch\n\n\ndef softmax(x):\n    return x.exp() / x.exp().sum(-1, keepdim=True)\n\n\n"
               "def attend(q, k, v):\n    return softmax(q @ k.transpose(-1, -2)) @ v\n"),
    ("NPU602", "import torch\n\n\nclass Norm(torch.nn.Module):\n    def forward(self, x):\n"
               "        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)\n"),
]


class Ungated(checker.WordGates):
    """Every handler for every statement."""

    def __init__(self, handlers, tables) -> None:
        super().__init__(handlers, tables)
        self.gated = []
        self.quiet = handlers


@pytest.mark.parametrize("code, text", CASES)
def test_the_words_keep_every_finding(code, text, monkeypatch) -> None:
    gated = [f.code for f in analyze(text, ADVICE).findings]
    monkeypatch.setattr(checker, "word_gates", Ungated)
    assert gated == [f.code for f in analyze(text, ADVICE).findings]
    assert code in gated


def test_a_handler_runs_only_for_statements_that_name_one_of_its_words() -> None:
    """A name, an attribute or the last part of a resolved qualified name counts; the word in
    a string, or elsewhere in the file, does not."""
    runs: list[int] = []

    def on_assign(checker, node, scope):
        runs.append(node.lineno)

    on_assign.words = ("DataLoader",)  # type: ignore[attr-defined]
    text = ("from torch.utils.data import DataLoader as Loader\n"
            "a = Loader(ds)\n"            # the resolved qualified name ends with the word
            "b = 'DataLoader'\n"          # text alone
            "c = data.DataLoader\n"       # an attribute
            "d = 1  # DataLoader\n"       # a comment
            "def f():\n    DataLoader = make()\n    e = DataLoader\n")  # a local name: all of f's assigns
    analyze_with(text, Settings(), rules=Handlers(assign=[on_assign]))
    assert runs == [2, 4, 7, 8]


def test_the_gate_keeps_the_lists_it_does_not_narrow() -> None:
    """The name dispatch is built once per handler list: the gate must not make new lists
    for each statement."""
    handlers = RULE_SET.handlers(ADVICE)
    gates = checker.word_gates(handlers, None)
    assert checker.word_gates(handlers, None) is gates
    quiet = gates.quiet
    assert quiet["reference"] is handlers["reference"] and quiet["attribute"] is handlers["attribute"]
    assert quiet["assign"] is not handlers["assign"]
    worded = [f for f in handlers["assign"] if getattr(f, "words", None) == ("deterministic",)]
    assert len(worded) == 1 and worded[0] not in quiet["assign"]
    named = gates.lists({"deterministic": [3]})
    assert worded[0] in named["assign"] and gates.lists({"deterministic": [9]}) is named  # the same lists
    assert gates.lists({"rsqrt": [1]}) is not named and gates.lists({"rsqrt": [1]})["assign"] == quiet["assign"]


def test_a_named_function_handler_runs_for_functions_of_its_names() -> None:
    """NPU607's functions: by name, from the advice table."""
    handlers = RULE_SET.handlers(ADVICE)["function"]
    named = [f for f in handlers if callable(getattr(f, "names", None))]
    assert len(named) == 1
    by_name, any_name = checker.name_dispatch(handlers, None)
    assert named[0] not in any_name and not any(named[0] in funcs for funcs in by_name.values())  # no tables: never
    text = "def channel_shuffle(x, groups):\n    return x\n\n\ndef shuffle(x, groups):\n    return x\n"
    findings = [(f.code, f.range.start_line) for f in analyze(text, ADVICE).findings]
    assert findings == [("NPU607", 0)]


def test_words_narrow_statement_events_only() -> None:
    with pytest.raises(ValueError, match="words= narrows assign, function and loop events only"):
        handles("string", "NPU101", words=("cuda",))
