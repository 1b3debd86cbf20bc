"""Git's ignore rules, read from the files themselves: `.gitignore` in every folder,
`.git/info/exclude` and the user's `core.excludesFile`. Git itself is not run in a checked
tree: a repository is untrusted, and its `.git/config` can name commands git runs while
listing files (`core.fsmonitor`, the transport of a partial clone's promisor remote).
The patterns follow gitignore(5) and git's wildmatch; files git tracks although a pattern
ignores them are ignored here too (as Ruff and ripgrep do)."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .sources import SourceError, read_regular

IGNORE_FILE = ".gitignore"
# POSIX classes in brackets, as wildmatch knows them (ASCII).
CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9",
    "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~", "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z", "xdigit": "0-9a-fA-F",
}


class _Invalid(Exception):
    """A pattern wildmatch rejects (an unclosed bracket, an unknown class): it never matches."""


def _bracket(pattern: str, i: int) -> tuple[str, int]:
    """The regex of the bracket expression opening at pattern[i], and the index after it.
    Under git's pathname matching a bracket never matches `/`."""
    i += 1
    negated = i < len(pattern) and pattern[i] in "!^"
    i += negated
    items = []
    first = True
    while True:
        if i >= len(pattern):
            raise _Invalid
        c = pattern[i]
        if c == "]" and not first:
            break
        first = False
        if c == "\\":
            i += 1
            if i >= len(pattern):
                raise _Invalid
            c = pattern[i]
        elif c == "[" and pattern.startswith(":", i + 1):
            end = pattern.find(":]", i + 2)
            if end < 0:
                raise _Invalid
            name = pattern[i + 2:end]
            if name not in CLASSES:
                raise _Invalid
            items.append(CLASSES[name])
            i = end + 2
            continue
        if pattern.startswith("-", i + 1) and i + 2 < len(pattern) and pattern[i + 2] != "]":
            i += 2
            high = pattern[i]
            if high == "\\":
                i += 1
                if i >= len(pattern):
                    raise _Invalid
                high = pattern[i]
            if ord(high) >= ord(c):  # an inverted range matches nothing, as in wildmatch
                items.append(f"{re.escape(c)}-{re.escape(high)}")
        else:
            items.append(re.escape(c))
        i += 1
    body = "".join(items)
    if negated:
        return f"[^/{body}]", i + 1
    return (f"(?!/)[{body}]" if body else "(?!)"), i + 1


def _wildmatch(pattern: str) -> str:
    """The regex of a wildmatch pattern matched against a slash-separated path: `*` and `?`
    stop at `/`, `**/` is any number of folders, a trailing `/**` all below."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            j = i
            while j < len(pattern) and pattern[j] == "*":
                j += 1
            at_start = i == 0 or pattern[i - 1] == "/"
            if j - i >= 2 and at_start and j == len(pattern):
                out.append(".*")
            elif j - i >= 2 and at_start and pattern[j] == "/":
                out.append("(?:.*/)?")
                j += 1
            else:
                out.append("[^/]*")
            i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            regex, i = _bracket(pattern, i)
            out.append(regex)
            continue
        elif c == "\\":
            i += 1
            if i >= len(pattern):
                raise _Invalid
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Pattern:
    regex: str  # matched against the path below the ignore file's folder
    negated: bool
    folders_only: bool


def parse_line(line: str) -> Pattern | None:
    """One line of an ignore file, as git's dir.c reads it; None for blanks and comments."""
    if not line or line.startswith("#"):
        return None
    end = len(line)
    while end and line[end - 1] == " " and not (end >= 2 and line[end - 2] == "\\"):
        end -= 1  # trailing spaces go, unless escaped
    line = line[:end]
    negated = line.startswith("!")
    line = line[negated:]
    folders_only = line.endswith("/")
    line = line.removesuffix("/")
    if not line:
        return None
    try:
        if "/" in line:  # anchored to the ignore file's folder
            regex = _wildmatch(line.removeprefix("/"))
        else:  # matches the name at any depth
            regex = "(?:.*/)?" + _wildmatch(line)
    except _Invalid:
        return None
    return Pattern(regex, negated, folders_only)


def parse_patterns(text: str) -> list[Pattern]:
    lines = text.removeprefix("\ufeff").split("\n")
    return [p for p in (parse_line(line.removesuffix("\r")) for line in lines) if p is not None]


class Rules:
    """The patterns of one ignore file, for paths below `base` (a relative folder, "" for
    the top). The last pattern that matches decides; the patterns are tried in one regex,
    last first, so one match call answers."""

    def __init__(self, base: str, patterns: list[Pattern]) -> None:
        self.base = base + "/" if base else ""
        self._files = self._compile([p for p in patterns if not p.folders_only])
        self._folders = self._compile(patterns)

    @staticmethod
    def _compile(patterns: list[Pattern]) -> tuple[re.Pattern, list[bool]] | None:
        if not patterns:
            return None
        ordered = patterns[::-1]
        regex = re.compile("|".join(f"({p.regex})" for p in ordered), re.DOTALL)
        return regex, [p.negated for p in ordered]  # group i+1 is ordered[i] (the patterns capture nothing)

    def decide(self, path: str, folder: bool) -> bool | None:
        """True ignored, False re-included (a `!` pattern), None when no pattern matches."""
        compiled = self._folders if folder else self._files
        if compiled is None or not path.startswith(self.base):
            return None
        regex, negated = compiled
        match = regex.fullmatch(path[len(self.base):])
        if match is None:
            return None
        return not negated[match.lastindex - 1]


def read_rules(path: str, base: str, problems: list[tuple[str, str]], in_tree: bool = True) -> Rules | None:
    """The rules of the ignore file at `path`, or None without one. Like git, a symbolic
    link in the tree is not followed. Only a regular file is read (a FIFO would hang git);
    one that exists but cannot be read is added to `problems` as (path, why)."""
    if not os.path.lexists(path) or (in_tree and os.path.islink(path)):
        return None
    try:
        raw, _ = read_regular(path)
    except SourceError as exc:
        problems.append((os.path.normpath(path), f"ignore file not read ({exc}); files it ignores may be checked"))
        return None
    patterns = parse_patterns(raw.decode("utf-8", "surrogateescape"))
    return Rules(base, patterns) if patterns else None


@functools.cache
def user_excludes() -> str:
    """The user's global ignore file: `core.excludesFile` of their own git configuration
    (asked outside any repository, so no repository's configuration is read), else git's
    default `$XDG_CONFIG_HOME/git/ignore`."""
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    try:
        out = subprocess.run(["git", "config", "--path", "--get", "core.excludesFile"], cwd=os.path.abspath(os.sep),
                             capture_output=True, timeout=10, check=False, env=env)
        if out.returncode == 0 and out.stdout.strip():
            return os.fsdecode(out.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "git", "ignore")


def _read_small(path: Path) -> str | None:
    try:
        return read_regular(str(path), 4096)[0].decode("utf-8", "surrogateescape").strip()
    except SourceError:
        return None


def _git_dir(top: Path) -> Path:
    """The git folder of a work tree: `.git`, or where a `.git` file (a linked work tree,
    a submodule) points, and then its common folder, which holds `info/exclude`."""
    dot_git = top / ".git"
    if not dot_git.is_file():
        return dot_git
    pointer = _read_small(dot_git)
    if pointer is None or not pointer.startswith("gitdir:"):
        return dot_git
    target = top / pointer.removeprefix("gitdir:").strip()
    common = _read_small(target / "commondir")
    return target / common if common else target


class IgnoreWalk:
    """Git's ignore rules along an `os.walk` of a folder inside a work tree: each folder's
    rules are its parent's plus its own `.gitignore`; an ignored folder is not entered (so,
    as in git, a `!` pattern below it cannot bring a file back), nor is a nested work tree
    (another repository, a submodule: git does not list its files either)."""

    def __init__(self, start: str, start_rel: str, stack: list[Rules], problems: list[tuple[str, str]]) -> None:
        self.start, self.start_rel, self.problems = start, start_rel, problems
        self.pending = {start: stack}

    def rel(self, path: str) -> str:
        below = os.path.relpath(path, self.start).replace(os.sep, "/")
        return self.start_rel if below == "." else f"{self.start_rel}/{below}" if self.start_rel else below

    def keep(self, root: str, dirs: list[str], files: list[str]) -> tuple[list[str], list[str]]:
        """The sub-folders to enter and the files to consider in `root`."""
        rel = self.rel(root)
        stack = self.pending.pop(root, [])
        own = read_rules(os.path.join(root, IGNORE_FILE), rel, self.problems)
        if own is not None:
            stack = [*stack, own]
        prefix = rel + "/" if rel else ""
        kept_dirs = []
        for name in dirs:
            path = os.path.join(root, name)
            if os.path.lexists(os.path.join(path, ".git")) or ignored(prefix + name, True, stack):
                continue
            kept_dirs.append(name)
            self.pending[path] = stack
        return kept_dirs, [name for name in files if not ignored(prefix + name, False, stack)]


def ignored(rel: str, folder: bool, stack: list[Rules]) -> bool:
    """Whether `rel` (relative to the work tree's top, with `/`) is ignored: the innermost
    ignore file with a matching pattern decides."""
    for rules in reversed(stack):
        verdict = rules.decide(rel, folder)
        if verdict is not None:
            return verdict
    return False


def ignore_walk(folder: Path, problems: list[tuple[str, str]]) -> IgnoreWalk | None:
    """The ignore rules for walking `folder`, or None when it is outside a git work tree or
    itself ignored (a folder named on the command line is wanted). Ignore files that
    cannot be read are added to `problems`."""
    resolved = folder.resolve()
    top = next((d for d in (resolved, *resolved.parents) if os.path.lexists(d / ".git")), None)
    if top is None:
        return None
    outer = (user_excludes(), str(_git_dir(top) / "info" / "exclude"))  # not in the tree: links followed
    stack = [r for r in (read_rules(path, "", problems, in_tree=False) for path in outer) if r is not None]
    parts = resolved.relative_to(top).parts
    for depth in range(len(parts)):
        own = read_rules(str(top.joinpath(*parts[:depth]) / IGNORE_FILE), "/".join(parts[:depth]), problems)
        if own is not None:
            stack.append(own)
        if ignored("/".join(parts[:depth + 1]), True, stack):
            return None
    return IgnoreWalk(str(folder), "/".join(parts), stack, problems)
