"""Dockerfiles read as Docker reads them: the `# escape=` parser directive, instructions that go
on over continuation lines (comment and empty lines inside one are dropped), `ARG` defaults
resolved in `FROM` (`ARG BASE=…` then `FROM ${BASE}`), build stages (`FROM x AS y`, then
`FROM y`), and the shell of `RUN` and the variables of `ENV` read by shell_script.py, so a
container's commands and variables get a launch script's findings. With `# escape=`` ` (Windows
images, whose RUN is cmd or PowerShell) RUN is not read as shell; nor is RUN's exec form
(`RUN ["a", "b"]`), which no shell runs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Range
from .shell_script import Assignment, ShellScript, shell_shebang
from .text import SourceText

DIRECTIVE = re.compile(r"#[ \t]*([A-Za-z]+)[ \t]*=[ \t]*(\S+)[ \t]*$")
KEYWORD = re.compile(r"[ \t]*([A-Za-z]+)(?:[ \t]+|$)")
WORD = re.compile(r"\S+")
HEREDOC = re.compile(r"<<(-?)[ \t]*([\"']?)([A-Za-z_]\w*)\2")
# a RUN that is only a heredoc, or a shell (with its options) reading one: the body is the script
SHELL_HEREDOC = re.compile(r"(?:(?:/[\w/]*/)?(?:ba|z|da|k)?sh(?:[ \t]+-[A-Za-z]+)*[ \t]+)?"
                           r"<<(?P<strip>-?)[ \t]*([\"']?)(?P<word>[A-Za-z_]\w*)\2")
LEGACY_ENV = re.compile(r"(\S+)[ \t]+(.*\S)")  # `ENV NAME value with spaces`
FLAG = re.compile(r"--[A-Za-z-]+(?:=\S*)?[ \t]*")  # `RUN --mount=type=cache,target=/root/.cache`
# `$NAME`, `${NAME}`, `${NAME:-default}`, `${NAME:+alternative}`
VARIABLE = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_]\w*)(?::(?P<op>[-+])(?P<word>[^}]*))?\}|(?P<bare>[A-Za-z_]\w*))")


@dataclass(frozen=True, slots=True)
class Instruction:
    keyword: str  # upper case
    parts: tuple[tuple[int, int, int], ...]  # (line, start, end): the arguments on each of its lines
    heredoc: tuple[int, ...] = ()  # the lines of its heredocs' bodies and delimiters (`RUN python3 <<EOF`)


@dataclass(frozen=True, slots=True)
class Image:
    """A `FROM`'s base image: as written, and with the global ARG defaults put in."""

    written: str
    resolved: str
    range: Range


class Dockerfile:
    """A Dockerfile's instructions, its base images (stages excepted) and the script its RUN and
    ENV instructions make."""

    def __init__(self, source: SourceText) -> None:
        self.source = source
        self.escape = "\\"
        self.instructions = self._instructions()
        self.images = self._images()
        self.script, shell_ends = self._script()
        # Lines a trailing noqa comment would change: all but those that end a RUN's shell (Docker
        # reads a `#` after an instruction's start as one of its arguments)
        self.no_comment = frozenset(range(len(source.lines))) - shell_ends

    def _instructions(self) -> list[Instruction]:
        lines = [self.source.line(i) for i in range(len(self.source.lines))]
        found: list[Instruction] = []
        directives = True  # parser directives come first, before any comment or instruction
        index = 0
        while index < len(lines):
            line = lines[index]
            if directives:
                directive = DIRECTIVE.match(line)
                if directive is not None and directive[1].lower() == "escape" and directive[2] in ("\\", "`"):
                    self.escape = directive[2]
                    index += 1
                    continue
                directives = directive is not None
            keyword = KEYWORD.match(line)
            if keyword is None or line.lstrip().startswith("#"):
                index += 1
                continue
            parts, start = [], keyword.end()
            while True:
                body = lines[index].rstrip()
                going_on = body.endswith(self.escape) and index + 1 < len(lines)
                end = len(body) - 1 if going_on else len(body)
                parts.append((index, min(start, end), end))
                index += 1
                if not going_on:
                    break
                while index < len(lines) and (not lines[index].strip() or lines[index].lstrip().startswith("#")):
                    index += 1  # Docker drops comment and empty lines inside an instruction
                if index == len(lines):
                    break
                start = 0
            heredoc = []
            if keyword[1].upper() in ("RUN", "COPY", "ADD"):
                for marker in HEREDOC.finditer(" ".join(lines[line][begin:end] for line, begin, end in parts)):
                    while index < len(lines):
                        heredoc.append(index)
                        index += 1
                        if (lines[index - 1].lstrip("\t") if marker[1] else lines[index - 1]) == marker[3]:
                            break
            found.append(Instruction(keyword[1].upper(), tuple(parts), tuple(heredoc)))
        return found

    def _words(self, instruction: Instruction) -> list[tuple[str, Range]]:
        """The instruction's words that lie on one line each, with their ranges."""
        return [(m.group(), Range(line, start + m.start(), line, start + m.end()))
                for line, start, end in instruction.parts
                for m in WORD.finditer(self.source.line(line)[start:end])]

    def _images(self) -> list[Image]:
        defaults: dict[str, str] = {}  # the ARGs before the first FROM: the only ones a FROM sees
        stages: set[str] = set()
        images, seen_from = [], False
        for instruction in self.instructions:
            words = self._words(instruction)
            if instruction.keyword == "ARG" and not seen_from:
                for word, _ in words:
                    name, sep, value = word.partition("=")
                    if sep:
                        defaults[name] = value[1:-1] if value[:1] in "\"'" and value[-1:] == value[:1] else value
            elif instruction.keyword == "FROM":
                seen_from = True
                names = [(w, r) for w, r in words if not w.startswith("--")]
                if not names:
                    continue
                written, where = names[0]
                resolved = VARIABLE.sub(lambda m: _value(m, defaults), written)
                if resolved.lower() not in stages:  # `FROM build` goes on from a stage, reported at its own FROM
                    images.append(Image(written, resolved, where))
                if len(names) == 3 and names[1][0].lower() == "as":
                    stages.add(names[2][0].lower())
        return images

    def _script(self) -> tuple[ShellScript, frozenset[int]]:
        """RUN and ENV arguments in place, everything else blanked (so a word keeps its line and
        column), read as one shell script; and the lines that end a RUN's shell, where a comment
        may go."""
        lines = list(self.source.lines)
        masked = [_blank(line) for line in lines]
        legacy: list[Assignment] = []
        ends = set()
        for instruction in self.instructions:
            first, start, _ = instruction.parts[0]
            body = self.source.line(first)[start:]
            if instruction.keyword == "RUN":
                flags = FLAG.match(body)
                while flags is not None and flags.group():
                    start += flags.end()
                    body = body[flags.end():]
                    flags = FLAG.match(body)
                if self.escape != "\\" or body.lstrip().startswith("["):
                    continue
                script_lines = self._shell_heredoc(instruction, start)
                if script_lines is not None:  # `RUN <<EOF`: the body is the script
                    for line in script_lines:
                        masked[line] = self.source.lines[line]
                    ends.update(script_lines)
                    continue
                if not instruction.heredoc:
                    ends.add(instruction.parts[-1][0])
            elif instruction.keyword == "ENV":
                words = self._words(instruction)
                if words and "=" not in words[0][0]:
                    legacy.extend(self._legacy_env(instruction))
                    continue
            else:
                continue
            self._unmask(masked, instruction, start)
        script = ShellScript(SourceText("".join(masked)))
        script.assignments = sorted([*script.assignments, *legacy],
                                    key=lambda a: (a.range.start_line, a.range.start_col))
        return script, frozenset(ends - script.no_comment)

    def _shell_heredoc(self, instruction: Instruction, start: int) -> list[int] | None:
        """The body lines of a RUN whose one heredoc is its shell script (`RUN <<EOF`, `RUN bash -e
        <<EOF`: Docker runs the body with the shell), unless the body's `#!` names another program;
        None for any other RUN."""
        line, _, end = instruction.parts[0]
        if not instruction.heredoc or len(instruction.parts) > 1:
            return None
        marker = SHELL_HEREDOC.fullmatch(self.source.line(line)[start:end].strip())
        if marker is None:
            return None
        body = list(instruction.heredoc)
        last = self.source.line(body[-1])
        if (last.lstrip("\t") if marker["strip"] else last) == marker["word"]:
            body.pop()  # the closing delimiter
        head = self.source.line(body[0]) if body else ""
        if head.startswith("#!") and not shell_shebang(head):
            return None
        return body

    def _unmask(self, masked: list[str], instruction: Instruction, start: int) -> None:
        parts = list(instruction.parts)
        parts[0] = (parts[0][0], start, parts[0][2])
        for (line, begin, end), following in zip(parts, [*parts[1:], None]):
            text = self.source.line(line)
            kept = " " * begin + text[begin:end]
            if following is not None:  # a continuation: the shell joins it the same way
                kept = kept.ljust(len(text) - 1) + "\\"
                for dropped in range(line + 1, following[0]):  # a dropped line goes on too
                    masked[dropped] = "\\".rjust(len(self.source.line(dropped))) + _ending(self.source.lines[dropped])
            masked[line] = kept.ljust(len(text)) + _ending(self.source.lines[line])
        for line in instruction.heredoc:  # the shell reads a heredoc's body as it is
            masked[line] = self.source.lines[line]

    def _legacy_env(self, instruction: Instruction) -> list[Assignment]:
        """`ENV NAME value`: one variable, the rest of the line its value."""
        line, start, end = instruction.parts[0]
        text = self.source.line(line)
        found = LEGACY_ENV.match(text, start, end)
        if found is None or len(instruction.parts) > 1:
            return []
        value = found[2]
        return [Assignment(found[1], value, Range(line, found.start(1), line, found.end(2)),
                           Range(line, found.start(1), line, found.end(1)),
                           Range(line, found.start(2), line, found.end(2)), "$" not in value)]


def _value(match: re.Match, defaults: dict[str, str]) -> str:
    name = match["braced"] or match["bare"]
    if name not in defaults:
        return match["word"] if match["op"] == "-" else match.group()
    if match["op"] == "+":
        return match["word"]
    return defaults[name] or (match["word"] if match["op"] == "-" else "")


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):]


def _blank(line: str) -> str:
    return " " * len(line.rstrip("\r\n")) + _ending(line)
