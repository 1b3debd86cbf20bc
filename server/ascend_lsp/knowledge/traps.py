"""The MindSpore trap vocabulary, defined once: the `Trap` record (a row of
mappings/mindspore/traps.toml), the call conditions (`when`) and the fix kinds.

The builder (mappings/build/mindspore_trap_tables.py) writes its traps with this record, the
schema's enums (mappings/schema/mindspore.json) are generated from these names by the
builder, knowledge/api_tables.py loads the rows into it, and the MS2xx handlers and rule pages use the
same names.
"""

from __future__ import annotations

from dataclasses import dataclass

SIDES = ("mindspore", "torch")  # whose call the trap is on: MindSpore code, or PyTorch code being ported

# when → the call shape that trips the trap
CONDITIONS = {
    "call": "any call",
    "missing": "`param` is not passed",
    "keyword": "`param` is passed by keyword",
    "positional": "an argument is passed at `param`'s position",
    "below": "`param` is a literal number below `value`",
    "equals": "`param` is the literal `value`",
    "not-equals": "`param` is passed, as a literal other than `value`",
    "positional-count": "exactly `value` positional arguments and no keyword",
    "missing-with": "`param` is not passed while `with-param` is (and is not 0)",
}
NEEDS_PARAM = frozenset(CONDITIONS) - {"call", "positional-count"}
NEEDS_WITH_PARAM = frozenset({"missing-with"})

# fix → what it does, for the rule pages ({param}, {value}: fix-value, {to}: fix-to, {with_param})
FIXES = {
    "add-keyword": "adds `{param}={value}`",
    "copy-keyword": "adds `{param}=` with the value of `{with_param}`",
    "rename-keyword": "renames `{param}=` to `{to}=`",
    "one-minus": "replaces `{param}=m` with `{to}=1 - m`",
    "to-keyword": "passes the argument as `{to}=`",
    "insert-positional": "inserts `{value}` as the first argument",
}
APPLICABILITIES = ("safe", "unsafe", "display")
SEVERITIES = ("error", "warning", "info", "hint")


@dataclass(frozen=True)
class Trap:
    """A documented PyTorch → MindSpore pitfall, as the call shape that trips it."""

    pitfall: str  # P01–P51 of the documented list
    rule: str  # the MS2xx code reported
    side: str  # one of SIDES
    apis: tuple[str, ...]
    when: str  # one of CONDITIONS
    message: str
    param: str | None = None
    position: int | None = None  # where `param` sits positionally in the signature
    value: object = None
    with_param: str | None = None  # missing-with: the parameter whose presence makes the absence matter
    with_position: int | None = None
    unless_param: str | None = None  # not reported when this parameter is passed ...
    unless_value: object = None  # ... (with this literal value, if given: kernel_size=1)
    unless_position: int | None = None
    fix: str | None = None  # one of FIXES
    fix_value: str | None = None  # source text the fix writes
    fix_to: str | None = None  # the keyword a rename or to-keyword fix writes
    applicability: str | None = None  # one of APPLICABILITIES
    severity: str | None = None  # default: the rule's
    default: object = None  # the documented MindSpore default of `param`
    fact: str = ""  # the documented fact (pitfalls.tsv), filled in by the builder
    source: str = ""  # its upstream document
    cites: str = ""  # builder only: the words of the fact the trap relies on (checked, not written)
    origin: str = ""  # loaded rows only: the table the row was read from

    def __post_init__(self) -> None:
        object.__setattr__(self, "apis", tuple(self.apis))
        problems = [
            f"side {self.side!r}" if self.side not in SIDES else "",
            f"when {self.when!r}" if self.when not in CONDITIONS else "",
            f"fix {self.fix!r}" if self.fix is not None and self.fix not in FIXES else "",
            f"applicability {self.applicability!r}" if self.applicability not in (None, *APPLICABILITIES) else "",
            "a fix without its applicability" if self.fix is not None and self.applicability is None else "",
            f"`{self.when}` without param" if self.when in NEEDS_PARAM and self.param is None else "",
            f"`{self.when}` without with-param" if self.when in NEEDS_WITH_PARAM and self.with_param is None else "",
        ]
        if any(problems):
            raise ValueError(f"trap {self.pitfall}/{self.rule}: {', '.join(p for p in problems if p)}")


def describe_fix(fix: str, param: str | None, value: str | None, to: str | None, with_param: str | None) -> str:
    return FIXES[fix].format(param=param, value=value, to=to or param, with_param=with_param)
