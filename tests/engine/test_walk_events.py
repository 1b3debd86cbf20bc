"""The walk's name events: named fields, and only the names a handler can read."""

from __future__ import annotations

import ast

from ascend_lsp.engine.walk import VALUE, NameEvent, module_context, walk

TEXT = '''import torch


def f(self, x):
    y = self.weight.to(x) + x.shape[0] + len(x)
    return torch.cuda.synchronize(), y
'''
LATE = '''import os


def f():
    def g():
        return synchronize(), cuda.current_device()
    from torch.cuda import synchronize
    from torch import cuda
    return g
'''


def names(text: str, reads: frozenset[str] | None) -> list[tuple[int, str, tuple[str, ...]]]:
    tree = ast.parse(text)
    module = module_context(tree)
    events = walk([(tree.body[-1], module.scope, VALUE, None)], module.scope, False, reads)
    assert all(type(event) is NameEvent for event in events.names)
    return [(event.node.lineno, ast.unparse(event.node), event.attrs) for event in events.names]


def test_a_name_no_import_binds_is_an_event_only_when_it_ends_with_a_name_read() -> None:
    assert names(TEXT, frozenset({"to"})) == [(5, "self.weight.to", ("weight", "to")),
                                              (6, "torch.cuda.synchronize", ("cuda", "synchronize"))]
    assert names(TEXT, frozenset()) == [(6, "torch.cuda.synchronize", ("cuda", "synchronize"))]


def test_without_names_read_every_name_is_an_event() -> None:
    assert [name for _, name, _ in names(TEXT, None)] == ["x", "len", "x.shape", "x", "self.weight.to", "y",
                                                          "torch.cuda.synchronize"]


def test_a_name_read_before_the_import_that_binds_it_is_an_event() -> None:
    """`synchronize` and `cuda` are walked before the imports below them bind them: the
    statement is walked again once they are bound."""
    assert names(LATE, frozenset()) == [(6, "cuda.current_device", ("current_device",)), (6, "synchronize", ())]
