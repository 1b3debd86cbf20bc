"""MS1xx: porting to MindSpore — each torch API called, looked up in the official
PyTorch → MindSpore mapping table of the configured MindSpore version."""

from __future__ import annotations

import ast

from ..engine.checker import Checker, Reference
from ..engine.model import Applicability, Severity
from ..knowledge.api_tables import Counterpart
from ..engine.registry import TableRef, handles, rule

MAPPING = TableRef("mappings/mindspore/api-<version>.toml", ("mapping",))
SOURCE = ("The official mapping table, mindspore-ai/docs `docs/mindspore/source_en/note/api_mapping/"
          "pytorch_api_mapping.md` (branches master = 2.6, r2.4.10, r1.10) and its `pytorch_diff/` pages.")
# The packages the mapping table covers; anything else is not ours to call unmapped.
MAPPED_ROOTS = ("torch.", "torchvision.", "torchaudio.", "torchtext.")
# The documentation branch of each table, for links to its difference pages.
DOC_BRANCH = {"2.6": "master", "2.4": "r2.4.10", "1.10": "r1.10"}
DIFF_PAGE = "https://www.mindspore.cn/docs/en/{branch}/note/api_mapping/pytorch_diff/{page}.html"

rule(
    code="MS101", name="no-mindspore-counterpart", severity=Severity.ERROR, fix="never", targets=("mindspore",),
    table=MAPPING,
    message="`{name}` has no counterpart in the MindSpore mapping tables (up to {version}).",
    doc=dict(
        what="Finds calls (and base classes) of PyTorch APIs that no official PyTorch → MindSpore mapping table "
             "up to the configured `mindspore-version` lists (the 2.6 table maps to `mindspore.mint`; APIs it leaves "
             "out are looked up in the 2.4 and 1.10 tables).",
        why="An API the table does not map has to be rewritten by hand — or it is CUDA-specific and goes "
            "away. MindSpore's Dev Toolkit lists these as \"no direct mapping yet\".",
        example="torch.cuda.synchronize()  # MS101\nscaler = torch.cuda.amp.GradScaler()  # MS101",
        fix="None automatic.",
        source=SOURCE,
    ),
)

rule(
    code="MS102", name="mindspore-counterpart-differs", severity=Severity.WARNING, fix="never", targets=("mindspore",),
    table=MAPPING,
    message="`{name}` → `{counterpart}` differs: {note}",
    doc=dict(
        what="Finds calls of PyTorch APIs whose MindSpore counterpart differs: parameter names, defaults, "
             "inputs or outputs. The hover shows both signatures and the parameter table of the difference page.",
        why="The call compiles once renamed but means something else: a default that differs changes the "
            "numbers silently.",
        example="x = torch.amax(t)  # MS102: mindspore.mint.amax — the default value of dim is different",
        fix="Display-only: the counterpart is named; its parameters need a person.",
        source=SOURCE,
    ),
)

rule(
    code="MS103", name="mindspore-counterpart", severity=Severity.INFO, fix="sometimes", targets=("mindspore",),
    table=MAPPING,
    message="`{name}` maps to `{counterpart}` (consistent).",
    doc=dict(
        what="Finds calls of PyTorch APIs whose MindSpore counterpart the table lists as consistent: same "
             "function, parameters, order, dtypes and defaults.",
        why="These are the mechanical part of a port: a rename.",
        example="y = torch.abs(x)\n\n# becomes\n\nimport mindspore\ny = mindspore.mint.abs(x)",
        fix="Safe: rewrites the call to the counterpart and adds `import mindspore`, when the table names exactly "
            "one counterpart and the checked MindSpore release has it.",
        source=SOURCE,
    ),
)


def table_of(entry: Counterpart) -> str:
    return entry.origin.rsplit("-", 1)[1].removesuffix(".toml")


def diff_url(entry: Counterpart) -> str:
    if not entry.diff_page:
        return ""
    page = entry.diff_page.rsplit("/", 1)[1].removesuffix(".md")
    return DIFF_PAGE.format(branch=DOC_BRANCH[table_of(entry)], page=page)


def counterpart_extra(entry: Counterpart, version: str) -> dict:
    return {
        "api": entry.torch, "mindspore": list(entry.mindspore), "classes": list(entry.classes), "note": entry.note,
        "torch_signature": entry.torch_signature, "mindspore_signature": entry.mindspore_signature,
        "parameters": [dict(p) for p in entry.parameters], "diff_page": entry.diff_page, "source": entry.source,
        "absent": list(entry.absent), "absent_in": entry.absent_in, "table_version": table_of(entry),
        "diff_url": diff_url(entry),
    }


def describe_counterpart(entry: Counterpart) -> list[str]:
    """Markdown lines on the MindSpore counterpart of a torch API (hover, explain)."""
    lines = [f"MindSpore ({table_of(entry)} table): " + ", ".join(f"`{name}`" for name in entry.mindspore)
             + f" — {', '.join(entry.classes).replace('_', ' ')}"]
    if entry.note and entry.note not in ("diff", "Consistent"):
        lines.append(entry.note)
    if entry.absent:
        lines.append(f"not in MindSpore {entry.absent_in}: " + ", ".join(f"`{n}`" for n in entry.absent))
    differing = [p for p in entry.parameters if p.get("difference", "-") not in ("-", "")]
    if differing:
        lines += ["", "| PyTorch | MindSpore | difference |", "|---|---|---|"]
        lines += [f"| {p['pytorch']} | {p['mindspore']} | {p['difference'].replace('|', '/')} |" for p in differing]
    if diff_url(entry):
        lines.append(f"[difference page]({diff_url(entry)})")
    return lines


def ms_rename_fix(checker: Checker, ref: Reference, new: str):
    edits = [checker.replace(ref.node, new)]
    if ref.scope.lookup("mindspore") != "mindspore":
        edits.insert(0, checker.require_name("mindspore"))
    return checker.fix(f"Replace `{ref.qualname}` with `{new}`", Applicability.SAFE, *edits)


@handles("reference", "MS101", "MS102", "MS103")
def check_counterpart(checker: Checker, ref: Reference) -> None:
    if ref.call is None or not ref.qualname.startswith(MAPPED_ROOTS):
        return
    if isinstance(ref.call, ast.Call) and ref.call.func is not ref.node:
        return
    tables = checker.tables
    version = tables.counterparts_version
    entry = tables.counterparts.get(ref.qualname)
    if entry is None:
        checker.report("MS101", ref.node, name=ref.qualname, version=version, origin=f"mappings/mindspore/api-{version}.toml")
        return
    shown = " | ".join(entry.mindspore)
    extra = counterpart_extra(entry, version)
    table_note = f" (MindSpore {table_of(entry)} table)" if table_of(entry) != version else ""
    absent_note = f" Not in MindSpore {entry.absent_in}: {', '.join(entry.absent)}." if entry.absent else ""
    if entry.consistent:
        usable = [name for name in entry.mindspore if name not in entry.absent]
        fixes = (ms_rename_fix(checker, ref, usable[0]),) if len(entry.mindspore) == 1 and usable else ()
        message = checker.rules["MS103"].message.format(name=ref.qualname, counterpart=shown) + table_note
        checker.report("MS103", ref.node, message + absent_note, fixes, origin=entry.origin, extra=extra)
        return
    if entry.classes == ("unspecified_no_note",):
        note = f"the MindSpore {table_of(entry)} table names it without saying how the two differ: check the parameters."
    elif entry.note and entry.note != "diff":
        note = entry.note
    else:
        note = "see " + (diff_url(entry) or "its difference page") + "."
    message = checker.rules["MS102"].message.format(name=ref.qualname, counterpart=shown, note=note) + table_note
    message += absent_note
    differing = [p for p in entry.parameters if p.get("difference", "-") not in ("-", "")]
    if differing:
        message += " Parameters: " + "; ".join(
            f"{p['pytorch']} → {p['mindspore']}: {p['difference']}" for p in differing[:3])
    checker.report("MS102", ref.node, message, origin=entry.origin, extra=extra)
