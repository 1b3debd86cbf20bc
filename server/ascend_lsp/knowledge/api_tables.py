"""The API tables in `mappings/` (torch_npu mappings and support lists, the MindSpore mapping
tables and traps, the advice tables), loaded once per (version, extra tables) and shared, and
a project's own `extra-mappings` tables checked as they are loaded."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from .files import TableError, mappings_root, read_table
from .schema import first_error
from .traps import Trap


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of [[api]], [[method]], [[literal]] or [[env]]."""

    name: str
    rule: str
    source: str
    replacement: str | None = None
    # "safe" | "unsafe" | "display" (the engine's Applicability values; knowledge holds the plain
    # value, as traps do, since it imports nothing from the engine); None: no fix
    fix: str | None = None
    note: str = ""
    prefix: bool = False
    deprecated: bool = False
    call: bool = False  # [[method]]: only when called
    kind: str = ""  # [[literal]]: device | backend
    if_keyword: str | None = None  # [[api]]: only for calls passing this keyword
    parameters: tuple[str, ...] | None = None  # [[method]]: torch's parameters; other calls are not torch's
    not_after: tuple[str, ...] = ()  # [[method]]: not reported on the result of these methods
    # [[env]]: the replacement reads the value in a larger unit: (divide by, the least value it takes)
    value_scale: tuple[int, int] | None = None
    severity: str | None = None  # [[api]]: reported at this severity in place of the rule's
    severity_except_on: tuple[str, ...] = ()  # [[api]]: chips where the rule's own severity stays
    transfer_maps: bool = False  # transfer_to_npu maps it to the NPU (rules/transfer_scope.py)
    origin: str = ""  # the table file it came from

    @classmethod
    def from_toml(cls, row: dict, origin: str, key: str = "name") -> "Entry":
        fix = row.get("fix")
        return cls(
            name=row[key],
            rule=row["rule"],
            source=row.get("source", ""),
            replacement=row.get("replacement"),
            fix=fix or None,
            note=row.get("note", ""),
            prefix=row.get("prefix", False),
            deprecated=row.get("deprecated", False),
            call=row.get("call", False),
            kind=row.get("kind", ""),
            if_keyword=row.get("if-keyword"),
            parameters=tuple(row["parameters"]) if "parameters" in row else None,
            not_after=tuple(row.get("not-after", ())),
            value_scale=(row["value-divisor"], row["value-minimum"]) if "value-divisor" in row else None,
            severity=row.get("severity"),
            severity_except_on=tuple(row.get("severity-except-on", ())),
            transfer_maps=row.get("transfer-maps", False),
            origin=origin,
        )


@dataclass(frozen=True, slots=True)
class Support:
    """One row of Ascend's native API support list."""

    name: str
    chips: dict
    source: str
    kind: str = ""
    page: str = ""
    npu_name: str = ""
    dtypes: tuple[str, ...] = ()
    fp64: bool | None = None
    complex: bool | None = None
    int64: bool | None = None
    cpu_fallback: bool = False
    limitations: str = ""
    # the torch_npu wheel's evidence, where the list marks it ✘ or says it may fall back: the aten operators
    # it runs, each with an NPU kernel; else those with none; the case its note names that the kernels do
    # not settle; the wheel's module that replaces it
    npu_kernels: tuple[str, ...] = ()
    no_npu_kernels: tuple[str, ...] = ()
    unsettled: str = ""
    npu_patched: str = ""
    origin: str = ""

    def supported_on(self, chip: str) -> bool:
        return bool(self.chips.get(chip, True))


@dataclass(frozen=True, slots=True)
class Counterpart:
    """One row of the PyTorch → MindSpore mapping table."""

    torch: str
    mindspore: tuple[str, ...]
    classes: tuple[str, ...]  # consistent, parameters_differ, default_differs, …
    source: str
    note: str = ""
    diff_page: str = ""
    torch_signature: str = ""
    mindspore_signature: str = ""
    parameters: tuple[dict, ...] = ()  # {pytorch, mindspore, difference}
    absent: tuple[str, ...] = ()  # counterparts the checked MindSpore release lacks
    absent_in: str = ""  # that release
    origin: str = ""

    @property
    def consistent(self) -> bool:
        return self.classes == ("consistent",)


@dataclass(slots=True)
class Tables:
    apis: dict[str, Entry] = field(default_factory=dict)
    methods: dict[str, Entry] = field(default_factory=dict)
    literals: list[Entry] = field(default_factory=list)
    env: dict[str, Entry] = field(default_factory=dict)
    support: dict[str, Support] = field(default_factory=dict)
    support_version: str = ""
    counterparts: dict[str, Counterpart] = field(default_factory=dict)  # torch API → MindSpore row
    counterparts_version: str = ""  # the mapping table's MindSpore version
    traps: dict[str, list[Trap]] = field(default_factory=dict)  # API → its traps
    # mappings/ascend_tools/advice.toml beyond its [[api]]/[[env]] rows: section → rows, as
    # read (the NPU6xx/NPU7xx rules index what they need)
    advice: dict[str, list[dict]] = field(default_factory=dict)
    # lookup's answers: a file names the same APIs over and over
    found: dict[str, Entry | None] = field(default_factory=dict, repr=False, compare=False)

    def lookup(self, qualname: str) -> Entry | None:
        """The entry for `qualname`: exact, else the longest `prefix` entry above it."""
        try:
            return self.found[qualname]
        except KeyError:
            if len(self.found) > 100_000:  # a server up for weeks: bounded
                self.found.clear()
            entry = self.found[qualname] = self._lookup(qualname)
            return entry

    def _lookup(self, qualname: str) -> Entry | None:
        entry = self.apis.get(qualname)
        if entry is not None:
            return entry
        head = qualname
        while "." in head:
            head = head.rpartition(".")[0]
            entry = self.apis.get(head)
            if entry is not None and entry.prefix:
                return entry
        return None


def _merge(tables: Tables, data: dict, origin: str) -> None:
    for row in data.get("api", ()):
        tables.apis[row["name"]] = Entry.from_toml(row, origin)
    for row in data.get("method", ()):
        tables.methods[row["name"]] = Entry.from_toml(row, origin)
    for row in data.get("literal", ()):
        tables.literals.append(Entry.from_toml(row, origin, key="match"))
    for row in data.get("env", ()):
        tables.env[row["name"]] = Entry.from_toml(row, origin)
    for row in data.get("support", ()):
        tables.support[row["name"]] = Support(
            name=row["name"],
            chips=row.get("chips", {}),
            source=row.get("source", ""),
            kind=row.get("kind", ""),
            page=row.get("page", ""),
            npu_name=row.get("npu-name", ""),
            dtypes=tuple(row.get("dtypes", ())),
            fp64=row.get("fp64"),
            complex=row.get("complex"),
            int64=row.get("int64"),
            cpu_fallback=row.get("cpu-fallback", False),
            limitations=row.get("limitations", ""),
            npu_kernels=tuple(row.get("npu-kernels", ())),
            no_npu_kernels=tuple(row.get("no-npu-kernels", ())),
            unsettled=row.get("unsettled", ""),
            npu_patched=row.get("npu-patched", ""),
            origin=origin,
        )


MINDSPORE_TABLES = ("1.10", "2.4", "2.6")  # oldest first


def _merge_mindspore(tables: Tables, mapping: dict, origin: str) -> None:
    for row in mapping.get("mapping", ()):
        absent = row.get("absent-in-mindspore", {})
        tables.counterparts[row["torch"]] = Counterpart(
            torch=row["torch"], mindspore=tuple(row["mindspore"]), classes=tuple(row["class"]),
            source=row["source"], note=row.get("note", ""), diff_page=row.get("diff-page", ""),
            torch_signature=row.get("torch-signature", ""), mindspore_signature=row.get("mindspore-signature", ""),
            parameters=tuple(row.get("parameters", ())), absent=tuple(absent.get("names", ())),
            absent_in=absent.get("version", ""), origin=origin)


def _merge_traps(tables: Tables, traps: dict) -> None:
    for row in traps.get("trap", ()):
        trap = Trap(
            pitfall=row["pitfall"], rule=row["rule"], side=row["side"], apis=tuple(row["apis"]), when=row["when"],
            message=row["message"], fact=row["fact"], source=row["source"], param=row.get("param"),
            position=row.get("position"), value=row.get("value"), with_param=row.get("with-param"),
            with_position=row.get("with-position"), unless_param=row.get("unless-param"),
            unless_value=row.get("unless-value"), unless_position=row.get("unless-position"),
            fix=row.get("fix"), fix_value=row.get("fix-value"), fix_to=row.get("fix-to"),
            applicability=row.get("applicability"), severity=row.get("severity"), default=row.get("default"),
            origin="mappings/mindspore/traps.toml")
        for api in trap.apis:
            tables.traps.setdefault(api, []).append(trap)


def mapping_rows(version: str) -> tuple[dict, ...]:
    """The [[mapping]] rows of mappings/mindspore/api-<version>.toml, as written."""
    return tuple(read_table(mappings_root() / "mindspore" / f"api-{version}.toml").get("mapping", ()))


def trap_rows() -> tuple[dict, ...]:
    """The [[trap]] rows of mappings/mindspore/traps.toml, as written."""
    return tuple(read_table(mappings_root() / "mindspore" / "traps.toml").get("trap", ()))


def mindspore_table(version: str) -> str:
    """The mapping table for a MindSpore release: 2.6 (mint) from 2.5 on, 2.4 (ops/nn)
    for 2.0–2.4, 1.10 before. Newer releases than the newest table use the newest."""
    try:
        major, minor = (int(p) for p in version.split(".")[:2])
    except ValueError:
        raise TableError(f"`mindspore-version` must look like 2.6 or 2.10, got {version!r}") from None
    if (major, minor) >= (2, 5):
        return "2.6"
    if major >= 2:
        return "2.4"
    return "1.10"


def available_versions(folder: str = "torch_npu", stem: str = "support") -> list[str]:
    return sorted(p.stem.removeprefix(f"{stem}-") for p in (mappings_root() / folder).glob(f"{stem}-*.toml"))


@functools.lru_cache(maxsize=8)
def load_tables(torch_npu_version: str, mindspore_version: str = "2.10",
                extra: tuple[tuple[str, float], ...] = (), driven: frozenset[str] = frozenset()) -> Tables:
    """Shipped tables for `torch_npu_version` and `mindspore_version`, then the user's
    extra tables (paths with their mtimes, so an edited table reloads), which override
    by name and whose rows may name the `driven` rules."""
    ms_table = mindspore_table(mindspore_version)
    ms_root = mappings_root() / "mindspore"
    root = mappings_root() / "torch_npu"
    support_file = root / f"support-{torch_npu_version}.toml"
    if not support_file.is_file():
        known = ", ".join(available_versions()) or "none"
        raise TableError(f"no support list for torch_npu {torch_npu_version} (known: {known})")
    tables = Tables(support_version=torch_npu_version)
    for path in (root / "cuda.toml", root / "env.toml", root / "thirdparty.toml", root / "realworld.toml",
                 support_file):
        _merge(tables, read_table(path), f"mappings/torch_npu/{path.name}")
    tables.counterparts_version = ms_table
    # The newer tables list fewer APIs (2.6 maps only to mint): an API they leave out
    # keeps the row of the newest older table that has it, which names its table.
    for version in MINDSPORE_TABLES[: MINDSPORE_TABLES.index(ms_table) + 1]:
        name = f"api-{version}.toml"
        _merge_mindspore(tables, read_table(ms_root / name), f"mappings/mindspore/{name}")
    _merge_traps(tables, read_table(ms_root / "traps.toml"))
    advice = read_table(mappings_root() / "ascend_tools" / "advice.toml")
    _merge(tables, advice, "mappings/ascend_tools/advice.toml")
    tables.advice = {k: v for k, v in advice.items() if k not in ("meta", "api", "env")}
    for extra_path, _mtime in extra:
        data = read_table(Path(extra_path))
        validate_user_table(data, extra_path, driven)
        _merge(tables, data, extra_path)
    return tables


ROW_KINDS = ("api", "method", "literal", "env", "support")


def validate_user_table(data: dict, path: str, driven: frozenset[str]) -> None:
    """Check an `extra-mappings` table against mappings/schema/torch_npu.json (its `[meta]`
    is optional) and that every row names one of the `driven` rules, so a bad row is a message
    naming the file, the row and the key, never a rule failing on it later."""
    for kind in ROW_KINDS:
        rows = data.get(kind, ())
        for index, row in enumerate(rows if isinstance(rows, list) else ()):
            if isinstance(row, dict) and "rule" in row and row["rule"] not in driven:
                raise TableError(f"{path}: [[{kind}]] row {index + 1}, key `rule`: {row['rule']!r} is not a "
                                 f"table-driven rule ({', '.join(sorted(driven))})")
    schema = json.loads((mappings_root() / "schema" / "torch_npu.json").read_text(encoding="utf-8"))
    schema["required"] = []
    error = first_error(data, schema)
    if error is not None:
        raise TableError(f"{path}: {_where(list(error.path))}: {error.message}")


def _where(location: list) -> str:
    """`[[api]] row 3, key `fix`` for a path like ['api', 2, 'fix']."""
    if not location:
        return "the table"
    head, rest = location[0], location[1:]
    text = f"[[{head}]]" if head in ROW_KINDS else f"[{head}]" if rest else f"key `{head}`"
    if rest and isinstance(rest[0], int):
        text += f" row {rest[0] + 1}"
        rest = rest[1:]
    if rest:
        text += ", key `" + ".".join(str(part) for part in rest) + "`"
    return text
