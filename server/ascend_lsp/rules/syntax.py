"""E999: the file (or a part of it) does not parse."""

from __future__ import annotations

from ..engine.model import Severity
from .base import rule

rule(
    code="E999", name="syntax-error", severity=Severity.ERROR, fix="never", targets=("torch_npu", "mindspore"),
    suppressible=False,
    message="SyntaxError: {name}",
    doc=dict(
        what="Reports where Python cannot parse the file.",
        why="Code that does not parse cannot be checked. The rest of the file still is: the statements before "
            "and after the broken one get their findings.",
        example="model.cuda(  # SyntaxError: '(' was never closed",
        fix="None.",
        source="CPython's parser (`ast.parse`).",
    ),
)
