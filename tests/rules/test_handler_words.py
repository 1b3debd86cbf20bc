"""`handles(..., words=)`: a handler that can report nothing in a file lacking its words is
not run for that file; the findings are those of running it everywhere."""

from __future__ import annotations

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine import Settings, checker
from ascend_lsp.rules import active_handlers
from ascend_lsp.rules.base import handles

ADVICE = Settings(select=("NPU", "NPU6", "NPU7"))
# Each case reaches its API under another name, or in a file whose other statements lack the
# words: the words must still be found.
CASES = {
    "NPU610": "from torch.utils.data import DataLoader as Loader\n\nloader = Loader(ds)\n"
              "for batch in loader:\n    loss = model(batch)\n    loss.backward()\n    opt.step()\n",
    "NPU614": "from os import environ as env\n\nenv['ASCEND_LAUNCH_BLOCKING'] = '1'\n",
    "NPU611": "import torch\n\nfor x in data:\n    loss = model(x)\n    loss.backward()\n    print(loss.item())\n",
    "NPU703": "import torch.backends.cudnn as cudnn\n\ncudnn.deterministic = True\n",
    "NPU605": "import torch\n\n\ndef attend(q, k, v):\n    w = torch.softmax(q @ k.transpose(-1, -2), dim=-1)\n"
              "    return w @ v\n",
}


def everywhere(handlers, tables, first):
    return handlers


@pytest.mark.parametrize("code", sorted(CASES))
def test_the_words_keep_every_finding(code, monkeypatch) -> None:
    gated = [f.code for f in analyze(CASES[code], ADVICE).findings]
    monkeypatch.setattr(checker, "in_text", everywhere)
    assert gated == [f.code for f in analyze(CASES[code], ADVICE).findings]
    assert code in gated


def test_a_handler_runs_only_in_a_file_with_one_of_its_words() -> None:
    handlers = active_handlers(ADVICE)
    worded = [f for f in handlers["assign"] if getattr(f, "words", None) == ("deterministic",)]
    assert len(worded) == 1
    assert worded[0] not in checker.in_text(handlers, None, "x = 1\n".find)["assign"]
    assert worded[0] in checker.in_text(handlers, None, "torch.backends.cudnn.deterministic = True\n".find)["assign"]


def test_the_gate_keeps_the_lists_it_does_not_narrow() -> None:
    """The name dispatch is built once per handler list: the gate must not make new lists
    for each file."""
    handlers = active_handlers(ADVICE)
    gated = checker.in_text(handlers, None, "x = 1\n".find)
    assert gated["reference"] is handlers["reference"] and gated["attribute"] is handlers["attribute"]
    assert gated["assign"] is not handlers["assign"]
    assert checker.in_text(handlers, None, "y = 2\n".find) is gated  # lacking the same words: the same lists


def test_a_named_function_handler_runs_for_functions_of_its_names() -> None:
    """NPU607's functions: by name, from the advice table."""
    handlers = active_handlers(ADVICE)["function"]
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
