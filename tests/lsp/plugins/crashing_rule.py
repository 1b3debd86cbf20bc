"""A rule plugin (loaded through ASCEND_LSP_EXTRA_RULES) whose handler always raises: the
server must log the failure and still report every other rule."""

from ascend_lsp.engine.model import Severity
from ascend_lsp.engine.registry import handles, rule

rule(code="NPU990", name="always-fails", message="never reported", severity=Severity.WARNING, fix="never",
     doc={"what": "Fails on every call.", "why": "To test the server.", "example": "f()", "fix": "None.",
          "source": "tests/lsp/plugins/crashing_rule.py"})


@handles("call", "NPU990")
def fail(checker, call, qualname):
    raise RuntimeError("this rule always fails")
