"""Version specifiers as projects pin them (`==2.1.0.post3`, `>=2.1,<2.3`, conda's `=2.1`): the
releases they name, the releases they admit, and whether two ranges meet. Read by the project's
pins (project.py), the rules that judge by them, and the guards that judge a torch's arms
(guards.torch_target)."""

from __future__ import annotations

import re

# One clause of a specifier: its operator (none: conda's bare `2.1.*`) and the release it names.
CLAUSE = re.compile(r"\s*(===|==|~=|!=|<=|>=|<|>|=)?\s*v?(\d+(?:\.\d+)*)")
# a whole clause as a range is written (`==4.55.*`, `~=4.54.0`, `!=4.52.0`), for overlap
SPECIFIER = re.compile(r"\s*(===|==|~=|!=|<=|>=|<|>|=)?\s*([0-9][0-9A-Za-z.*+!-]*)\s*$")
RELEASE = re.compile(r"\d+(?:\.\d+)*")
FLOOR_OPERATORS = frozenset({"===", "==", "~=", ">=", ">", "=", None})  # the clauses that bound from below


def release(version: str) -> tuple[int, ...]:
    """The release numbers of a version (`2.1.0.post3` → (2, 1, 0)), for comparisons."""
    match = CLAUSE.match(version)
    return tuple(int(p) for p in match.group(2).split(".")) if match else ()


def floor(spec: str) -> tuple[int, ...] | None:
    """The oldest release the specifier admits, as its clauses bound it from below; None without such a clause."""
    floors = [release(m.group(2)) for clause in spec.split(",")
              if (m := CLAUSE.match(clause)) is not None and m.group(1) in FLOOR_OPERATORS]
    return max(floors) if floors else None


def allows_before(spec: str, version: str) -> bool:
    """Whether the specifier `spec` (as `pin` gives it) admits a release older than `version`:
    none of its clauses bounds it from below at `version` or later (`<2.6` admits any older)."""
    oldest = floor(spec)
    return oldest is None or oldest < release(version)


def held_before(spec: str, version: str, target: str | None) -> bool:
    """Whether a project pinning `spec` may stay on a release older than `version` where it is
    ported: the spec admits one, and not `target`, the release a port installs where the spec
    allows it (the configured torch-npu-version, or the torch paired with it; None: unknown)."""
    return allows_before(spec, version) and (target is None or not admits(spec, release(target)))


def _clauses(spec: str, version: tuple[int, ...]):
    """Each clause of the specifier: its operator, the release it names, and that release and
    `version` padded to one width, for comparisons."""
    for part in spec.split(","):
        match = CLAUSE.match(part)
        if match is None:
            continue
        bound = release(match.group(2))
        width = max(len(bound), len(version))
        yield (match.group(1) or "==", bound, bound + (0,) * (width - len(bound)),
               version + (0,) * (width - len(version)))


def admits(spec: str, version: tuple[int, ...]) -> bool:
    """Whether the specifier admits the release (`>=1.9.1` admits (2, 13, 0); `==2.1` (2, 1, 3); `<2.4` not (2, 4))."""
    for op, bound, theirs, mine in _clauses(spec, version):
        if op in ("==", "=", "===") and version[:len(bound)] != bound \
                or op == "~=" and (mine < theirs or version[:len(bound) - 1] != bound[:-1]) \
                or op == ">=" and mine < theirs or op == ">" and mine <= theirs \
                or op == "<=" and mine > theirs or op == "<" and mine >= theirs:
            return False
    return True


def admits_from(spec: str, version: str) -> bool:
    """Whether the specifier admits `version` or a later release: none of its clauses bounds it
    from above below `version` (`<0.41.0`, `<=0.45`, `==0.41.1`, `~=0.45.0` admit none from 0.46.0)."""
    least = release(version)
    for op, bound, theirs, first in _clauses(spec, least):
        if op == "<" and theirs <= first or op == "<=" and theirs < first \
                or op in ("==", "=", "===") and bound < least[:len(bound)] \
                or op == "~=" and bound[:-1] < least[:len(bound) - 1]:
            return False
    return True


def _padded(version: str) -> tuple[int, ...]:
    """The release numbers without trailing zeros (`4.55.0` → (4, 55)), so that equal releases compare equal."""
    found = RELEASE.match(version)
    parts = [int(p) for p in found.group().split(".")] if found else [0]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _satisfies(version: str, specifier: str) -> bool | None:
    """Whether `version` (releases only) meets a comma-separated specifier; None when one part
    cannot be read."""
    for part in specifier.split(","):
        found = SPECIFIER.match(part)
        if found is None:
            return None
        op, bound = found.group(1) or "==", found.group(2)
        v = _padded(version)
        if bound.endswith(".*") or op == "=":  # a prefix (`==4.55.*`, conda's `=4.55`)
            prefix = _padded(bound.removesuffix(".*"))
            met = (v + (0,) * len(prefix))[:len(prefix)] == prefix
            met = not met if op == "!=" else met
        else:
            b = _padded(bound)
            if op == "~=":
                head = b[:max(len(RELEASE.match(bound).group().split(".")) - 1, 1)]
                met = v >= b and v[:len(head)] == head
            else:
                met = {"==": v == b, "===": v == b, "!=": v != b, "<=": v <= b, ">=": v >= b, "<": v < b,
                       ">": v > b}[op]
        if not met:
            return False
    return True


def overlap(pin: str, windows: list[str]) -> str | None:
    """The first window some version of which `pin` allows: tried at the lowest version, at the
    versions both name and just above each (where two ranges meet, one of these lies in both)."""
    named = [m.group() for text in (pin, *windows) for m in RELEASE.finditer(text)]
    candidates = ["0", *named, *(v + ".0.1" for v in named)]
    for window in windows:
        if any(_satisfies(c, pin) and _satisfies(c, window) for c in candidates):
            return window
    return None
