"""`lsp-check explain CODE|API`: a rule's page, or everything the tables know of an API."""

from __future__ import annotations

from ..engine.config import Settings
from ..rules import RULES
from ..rules.describe import describe_api
from ..rules.docs import page


def explain(what: str, settings: Settings) -> str | None:
    rule = RULES.get(what.upper())
    if rule is not None:
        return page(rule)
    lines = describe_api(what, settings)
    return "\n".join(lines) if lines else None
