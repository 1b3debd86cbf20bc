"""Version specifiers as projects pin them (`==2.1.0.post3`, `>=2.1,<2.3`, conda's `=2.1`): the
releases they name and the releases they admit. Read by the project's pins (project.py), the rules
that judge by them, and the guards that judge a torch's arms (guards.torch_target)."""

from __future__ import annotations

import re

# One clause of a specifier: its operator (none: conda's bare `2.1.*`) and the release it names.
CLAUSE = re.compile(r"\s*(===|==|~=|!=|<=|>=|<|>|=)?\s*v?(\d+(?:\.\d+)*)")
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
