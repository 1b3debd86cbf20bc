"""Shell launch scripts read without running anything: the environment assignments
(`export A=B C=D`, `A=B cmd`, `env A=B cmd`) and the commands with their words, each with
its exact range. Quotes, `\\` escapes and line continuations, comments, `$(...)` and
backquoted commands (read as commands of their own) and heredocs (whose bodies are data,
skipped) are understood; anything else a shell does (expansion, functions, aliases) is not.

An NPU-aware script says which arm of an `if` runs on the NPU as Python's backend branches
do (engine/guards.py): in an `if`/`elif` chain whose test names the NPU (`[ "$DEVICE" = npu ]`,
`command -v npu-smi`, `$USE_NPU`), that arm runs there and every other arm of the chain never
does. A negated test (`!`, `!=`, `-ne`, `-z`) is no evidence either way, as in Python.

A command's options (`--device cuda:0`, `--device=cuda`, an override `trainer.device=cuda`) are
read with the program they belong to: after a Python launcher's script or module
(`python train.py`, `torchrun ... -m pkg.run`), that script's or module's."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from .guards import NPU_WORD
from .model import Range
from .text import SourceText

BLANKS = " \t"
BREAKS = "\r\n"
# Characters that end an unquoted word (an operator or a redirection starts there).
OPERATORS = ";&|()<>"
# Words that open or close a compound command: the simple command starts after them.
RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in", "case",
                      "esac", "{", "}", "!", "time", "function", "select"})
# Programs that run the rest of their words as a command (after their own options).
WRAPPERS = frozenset({"sudo", "nohup", "exec", "command", "nice", "stdbuf", "watch", "srun"})
DECLARATIONS = frozenset({"export", "declare", "typeset", "readonly", "local"})
REDIRECTIONS = frozenset({"<", ">", ">>", "<<<", "&>", ">&", "<&", ">|", "<<", "<<-"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
NEGATIONS = frozenset({"!", "!=", "-ne", "-z"})  # `-z "$ASCEND_HOME_PATH"`: the arm without it
# a test that an NVIDIA tool is installed (`command -v nvidia-smi >/dev/null`, `which nvcc`): its arm runs
# only where the tool is, which an NPU host is not
NVIDIA_TOOL_TEST = re.compile(r"\b(?:command\s+-v|which|type|hash)\s+(nvidia-smi|nvcc)\b")
NVIDIA_TOOL_ARM = " (In an arm that runs only where `{tool}` is installed, which an NPU host is not.)"
NVIDIA_TOOL_PROBE = " (A test that `{tool}` is installed: on an NPU host it is not, and the script goes on without it.)"
# Programs that start a Python program: options after its script or module are that program's.
PYTHON = re.compile(r"python(?:[0-9]+(?:\.[0-9]+)?)?")
PYTHON_LAUNCHERS = frozenset({"torchrun", "accelerate", "deepspeed"})
# Programs that only write their words out: an option among them is text that nothing reads.
PRINTERS = frozenset({"echo", "printf"})
# An override's key (`trainer.device`, `+model.device`): dotted names, as Hydra and OmegaConf read them.
OVERRIDE_KEY = re.compile(r"\+{0,2}([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)")


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a command: its text with the quotes and escapes removed, and where it is
    written (quotes included)."""

    text: str
    range: Range
    literal: bool  # no `$` expansion and no command substitution in it


@dataclass(frozen=True, slots=True)
class Assignment:
    """`NAME=value`: exported, a command's prefix, one of `env`'s, or a plain shell variable."""

    name: str
    value: str  # unquoted; "" for `NAME=`
    range: Range  # NAME=value as written
    name_range: Range
    value_range: Range  # the value as written, quotes included (empty at the `=`'s end for `NAME=`)
    literal: bool  # the value has no expansion


def scaled_value(written: str, divisor: int, least: int) -> tuple[str | None, str]:
    """A value's digits, as a file writes them, in a unit `divisor` times larger: rounded up
    (what needed the old amount is never given less), and at least `least`; or None and why
    not. The old unit's reader is C's strtoll(value, NULL, 0) (NCCL's parameters,
    src/include/param.h): a leading 0 makes the number octal, and one of 2**63 or more is out
    of range, where NCCL keeps its default; neither is guessed."""
    if not written.isascii() or not written.isdigit():
        return None, f"`{written}` is not a whole number written alone (digits, in one pair of quotes at most)"
    if len(written) > 1 and written[0] == "0":
        return None, f"`{written}` starts with 0, which is an octal number to NCCL"
    if int(written) >= 2 ** 63:
        return None, f"`{written}` is out of NCCL's range (2**63 or more), which keeps its default for it"
    return str(max(-(-int(written) // divisor), least)), ""


@dataclass(frozen=True, slots=True)
class Command:
    """A simple command: the program and its arguments, after its assignments and wrappers
    (`env A=B sudo nvidia-smi -L` is `nvidia-smi -L`)."""

    words: tuple[Word, ...]

    @property
    def program(self) -> str:
        return self.words[0].text.rpartition("/")[2]

    @property
    def range(self) -> Range:
        first, last = self.words[0].range, self.words[-1].range
        return Range(first.start_line, first.start_col, last.end_line, last.end_col)


@dataclass(frozen=True, slots=True)
class Option:
    """One option of a command: `--name value`, `--name=value`, or an override `key=value`."""

    name: str  # without its dashes or an override's `+`: "device", "trainer.device"
    value: str  # unquoted
    range: Range  # the value as written (quotes included)
    owner: str  # whose option: the program, or the script or module a Python launcher runs


def options(command: Command, source: SourceText) -> list[Option]:
    """The options of `command` with whose they are (a printer's words are text, and have none;
    a wrapper's, `nohup python train.py --device cuda`, are the command it runs).
    A word after `--name` is its value unless it is an option itself; a `key=value` word is an
    override only for a Python program (`make device=cuda` sets make's variable)."""
    program = command.program
    if program in PRINTERS or program in WRAPPERS:  # a wrapper's command is read as a command of its own
        return []
    launcher = PYTHON.fullmatch(program) is not None or program in PYTHON_LAUNCHERS
    owner, found, words = program, [], command.words
    for i, word in enumerate(words[1:], 1):
        text = word.text
        if launcher and (text.endswith(".py") or words[i - 1].text == "-m") and not text.startswith("-"):
            owner = text.rpartition("/")[2]
            continue
        if text.startswith("--"):
            name, sep, value = text[2:].partition("=")
            if sep:
                found.append(Option(name, value, _after_equals(word, source), owner))
            elif i + 1 < len(words) and not words[i + 1].text.startswith("-"):
                following = words[i + 1]
                found.append(Option(name, following.text, following.range, owner))
        elif launcher and "=" in text and not text.startswith("-"):  # only Python programs read overrides
            key = OVERRIDE_KEY.fullmatch(text.partition("=")[0])
            if key is not None:
                found.append(Option(key.group(1), text.partition("=")[2], _after_equals(word, source), owner))
    return found


def _after_equals(word: Word, source: SourceText) -> Range:
    """Where the value after a word's first `=` is written (the whole word where it spans lines)."""
    written = source.segment(word.range)
    equals = written.find("=")
    if word.range.start_line != word.range.end_line or equals < 0:
        return word.range
    return Range(word.range.start_line, word.range.start_col + equals + 1, word.range.end_line, word.range.end_col)


@dataclass(slots=True)
class _Token:
    text: str
    start: int
    end: int
    literal: bool
    operator: bool = False


class _Lexer:
    """Splits text[start:end] into words and operators; records the commands found inside
    `$(...)` and backquotes by reading them as scripts of their own."""

    def __init__(self, text: str, nested: list[tuple[int, int]], joined: list[tuple[int, int]]) -> None:
        self.text = text
        self.nested = nested  # (start, end) of command substitutions, read afterwards
        # (start, end): text that goes on over line breaks (a `\` continuation, a word, a
        # heredoc's body), whose lines from start's to before end's take no trailing comment
        self.joined = joined

    def tokens(self, start: int, end: int) -> list[_Token]:
        text, i, out = self.text, start, []
        heredocs: list[tuple[str, bool]] = []  # delimiters whose bodies start at the next line
        while i < end:
            char = text[i]
            if char in BLANKS:
                i += 1
            elif char == "\\" and i + 1 < end and text[i + 1] in BREAKS:
                self.joined.append((i, _after_break(text, i + 1)))
                i = self.joined[-1][1]
            elif char in BREAKS:
                i = _after_break(text, i)
                out.append(_Token("\n", i - 1, i, True, True))
                if heredocs:
                    body, i = i, _skip_heredocs(text, i, end, heredocs)
                    self.joined.append((body, i))
                    heredocs = []
            elif char == "#":
                while i < end and text[i] not in BREAKS:
                    i += 1
            elif char in OPERATORS:
                op = _operator(text, i, end)
                out.append(_Token(op, i, i + len(op), True, True))
                i += len(op)
                if op in ("<<", "<<-"):
                    i, delimiter = self._heredoc_delimiter(i, end)
                    if delimiter is not None:
                        heredocs.append((delimiter, op == "<<-"))
            else:
                token = self._word(i, end)
                out.append(token)
                i = token.end
                if "\n" in text[token.start:i] or "\r" in text[token.start:i]:
                    self.joined.append((token.start, i))
        return out

    def _heredoc_delimiter(self, i: int, end: int) -> tuple[int, str | None]:
        while i < end and self.text[i] in BLANKS:
            i += 1
        if i >= end or self.text[i] in BREAKS:
            return i, None
        token = self._word(i, end)
        return token.end, token.text

    def _word(self, i: int, end: int) -> _Token:
        text, start, parts, literal = self.text, i, [], True
        while i < end:
            char = text[i]
            if char in BLANKS or char in BREAKS or char in OPERATORS:
                break
            if char == "\\":
                if i + 1 < end and text[i + 1] in BREAKS:
                    i = _after_break(text, i + 1)  # a continuation inside a word joins it
                    continue
                parts.append(text[i + 1:i + 2])
                i += 2
            elif char == "'":
                close = text.find("'", i + 1, end)
                close = end if close < 0 else close
                parts.append(text[i + 1:close])
                i = close + 1
            elif char == '"':
                i, part, plain = self._double_quoted(i + 1, end)
                parts.append(part)
                literal = literal and plain
            elif char == "$" or char == "`":
                after = self._expansion(i, end)
                parts.append(text[i:after])
                literal = False
                i = after
            else:
                parts.append(char)
                i += 1
        return _Token("".join(parts), start, min(i, end), literal)

    def _double_quoted(self, i: int, end: int) -> tuple[int, str, bool]:
        text, parts, literal = self.text, [], True
        while i < end and text[i] != '"':
            char = text[i]
            if char == "\\" and i + 1 < end:
                following = text[i + 1]
                if following in BREAKS:
                    i = _after_break(text, i + 1)
                    continue
                parts.append(following if following in '"\\$`' else char + following)
                i += 2
            elif char == "$" or char == "`":
                after = self._expansion(i, end)
                parts.append(text[i:after])
                literal = False
                i = after
            else:
                parts.append(char)
                i += 1
        return i + 1, "".join(parts), literal

    def _expansion(self, i: int, end: int) -> int:
        """Where the `$...` or backquoted expansion at `i` ends; a command substitution is
        noted to be read as a script."""
        text = self.text
        if text[i] == "`":
            close = i + 1
            while close < end and text[close] != "`":
                close += 2 if text[close] == "\\" else 1
            self.nested.append((i + 1, min(close, end)))
            return min(close + 1, end)
        if text.startswith("$((", i):
            return _balanced(text, i + 2, end)
        if text.startswith("$(", i):
            after = _balanced(text, i + 1, end)
            self.nested.append((i + 2, after - 1))
            return after
        if text.startswith("${", i):
            return _braced(text, i + 1, end)
        j = i + 1
        while j < end and (text[j].isalnum() or text[j] == "_"):
            j += 1
        return j + 1 if j == i + 1 and j < end and text[j] in "@*#?$!-0123456789" else j


def shell_shebang(head: str) -> bool:
    """Whether a file's first line, `head`, runs it with sh, bash, zsh, dash or ksh:
    `#!/bin/bash`, `#! /bin/sh`, `#!/usr/bin/env -S bash -e` (the interpreter's own name decides)."""
    if not head.startswith("#!"):
        return False
    words = [w.rpartition("/")[2] for w in head[2:].split()]
    if words[:1] == ["env"]:
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return bool(words) and words[0] in SHELLS


def _after_break(text: str, i: int) -> int:
    return i + 2 if text.startswith("\r\n", i) else i + 1


def _operator(text: str, i: int, end: int) -> str:
    for op in ("<<<", "<<-", "&&", "||", ";;", "<<", ">>", "&>", ">&", "<&", ">|"):
        if text.startswith(op, i) and i + len(op) <= end:
            return op
    return text[i]


def _balanced(text: str, i: int, end: int) -> int:
    """The index after the `)` that closes the `(` at `i` (quotes respected)."""
    depth, quote = 0, ""
    while i < end:
        char = text[i]
        if quote:
            if char == "\\" and quote == '"':
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "\\":
            i += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return end


def _braced(text: str, i: int, end: int) -> int:
    """The index after the `}` that closes the `{` at `i` of a `${...}`: a default may hold
    double quotes, `$(...)` and other `${...}` (`"${NAME:-$(basename "${DIR,,}")-x}"`). A `'`
    is no quote there inside double quotes (`"${MSG:-it's}"`), so none is one."""
    depth = 0
    while i < end:
        char = text[i]
        if char == "\\":
            i += 1
        elif char == '"':
            close = text.find(char, i + 1, end)
            i = end if close < 0 else close
        elif text.startswith("$(", i):
            i = _balanced(text, i + 1, end) - 1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return end


def _skip_heredocs(text: str, i: int, end: int, heredocs: list[tuple[str, bool]]) -> int:
    """Past the bodies of the heredocs opened on the line before `i`, in order."""
    for delimiter, strip_tabs in heredocs:
        while i < end:
            line_end = i
            while line_end < end and text[line_end] not in BREAKS:
                line_end += 1
            line = text[i:line_end]
            i = _after_break(text, line_end) if line_end < end else end
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
    return i


@dataclass(slots=True)
class _Chain:
    """An `if` chain being read: its arms so far as (start, end, tests for the NPU)."""

    test_start: int = -1  # the open test's start, while one is read
    arm_start: int = -1  # the open arm's start
    arm_npu: bool = False
    arm_tool: str = ""  # the NVIDIA tool the open arm's test finds installed (NVIDIA_TOOL_TEST)
    arms: list[tuple[int, int, bool]] = field(default_factory=list)


def _nvidia_tool(test: str) -> tuple[str, bool]:
    """The NVIDIA tool an `if` test looks for ("" for none), and whether it is negated."""
    found = NVIDIA_TOOL_TEST.search(test)
    return (found.group(1), bool(NEGATIONS.intersection(test.split()))) if found is not None else ("", False)


def _tests_npu(test: str) -> bool:
    """Whether an `if` test names the NPU (guards.NPU_WORD: `npu`, `hccl`, `ascend`) and is not negated."""
    return NPU_WORD.search(test.lower()) is not None and not NEGATIONS.intersection(test.split())


def _start(item: Assignment | Command) -> tuple[int, int]:
    return item.range.start_line, item.range.start_col


def _bare(token: _Token) -> str:
    """The token's text when it is written as is (no quote, escape or expansion), else ""."""
    return token.text if token.literal and token.end - token.start == len(token.text) else ""


def _options(words: list[_Token], with_value: tuple[str, ...]) -> list[_Token]:
    """`words` after the leading options of a program (and the values of those in `with_value`)."""
    while words and words[0].text.startswith("-"):
        words = words[2:] if words[0].text in with_value else words[1:]
    return words


def _is_name(text: str) -> bool:
    return bool(text) and (text[0].isalpha() or text[0] == "_") and all(c.isalnum() or c == "_" for c in text)


class ShellScript:
    """The assignments and commands of a script, in the order they are written."""

    def __init__(self, source: SourceText) -> None:
        self.source = source
        self.assignments: list[Assignment] = []
        self.commands: list[Command] = []
        # (name, where) of each name declared without a value (`export NAME`, `readonly NAME`):
        # a fix renaming a variable's assignments renames these too
        self.declared: list[tuple[str, Range]] = []
        # the arms of `if` chains that test for the NPU: those that never run there / only there
        self.off_npu: list[Range] = []
        self.on_npu: list[Range] = []
        # the arms that never run on an NPU host for a reason of their own (an NVIDIA tool found), and
        # the tests that look for such a tool
        self.off_why: list[tuple[Range, str]] = []
        self._chains: list[_Chain] = []  # the `if`s open while reading
        text = source.text
        pending = [(0, len(text))]
        joined: list[tuple[int, int]] = []
        while pending:
            start, end = pending.pop()
            nested: list[tuple[int, int]] = []
            self._read(_Lexer(text, nested, joined).tokens(start, end))
            pending.extend(nested)
        self.assignments.sort(key=_start)
        self.commands.sort(key=_start)
        offsets = source.line_offsets
        # Lines a trailing noqa comment would change: one continued with `\`, inside a quoted word
        # or `$(...)` that goes on, or a heredoc's text (the comment would become its data).
        self.no_comment = frozenset(line for start, end in joined for line in range(
            bisect.bisect_right(offsets, start) - 1, bisect.bisect_right(offsets, end) - 1))

    def _range(self, start: int, end: int) -> Range:
        offsets = self.source.line_offsets
        first = bisect.bisect_right(offsets, start) - 1
        last = bisect.bisect_right(offsets, end) - 1
        return Range(first, start - offsets[first], last, end - offsets[last])

    def _read(self, tokens: list[_Token]) -> None:
        words: list[_Token] = []
        redirect = False
        for token in tokens:
            if token.operator:
                if token.text in REDIRECTIONS:
                    if words and words[-1].end == token.start and words[-1].text.isdigit():
                        words.pop()  # the `2` of `2>file`
                    redirect = token.text not in ("<<", "<<-")  # a heredoc's delimiter was consumed
                    continue
                self._simple(words)
                words = []
            elif redirect:
                redirect = False  # the file a redirection names is not an argument
            else:
                words.append(token)
        self._simple(words)

    def _simple(self, words: list[_Token]) -> None:
        """One simple command's words: its assignments, then the command, if any."""
        while words and _bare(words[0]) in RESERVED:
            self._keyword(words[0])
            words = words[1:]
        declaring = False  # after `export`/`local`/...: every word is an assignment or a name
        while words:
            head = words[0]
            name, sep, _ = head.text.partition("=")
            program = _bare(head).rpartition("/")[2]
            if sep and _is_name(name) and self.source.text.startswith(name + "=", head.start):
                self._assignment(head, name)
                words = words[1:]
            elif declaring:
                if _is_name(_bare(head)):
                    self.declared.append((head.text, self._range(head.start, head.end)))
                words = words[1:]  # `export NAME`: no value here
            elif program in DECLARATIONS:
                declaring = True
                words = [w for w in words[1:] if not w.text.startswith("-")]
            elif program == "env":
                words = _options(words[1:], ("-u", "--unset", "-C", "--chdir", "-S"))
            elif program in WRAPPERS and len(words) > 1:
                self._add_command(words)  # the wrapper itself is a command too (`watch nvidia-smi`)
                words = _options(words[1:], ("-n", "-u", "-g", "-o", "-e", "-i"))  # `watch -n 1`, `sudo -u me`
            else:
                self._add_command(words)
                return

    def _keyword(self, token: _Token) -> None:
        """Follow the arms of `if` chains: a test runs from `if`/`elif` to `then`, an arm from
        `then`/`else` to the next `elif`/`else`/`fi`."""
        word, chains = token.text, self._chains
        if word == "if":
            chains.append(_Chain(test_start=token.end))
        elif not chains:
            return
        elif word == "then" and chains[-1].test_start >= 0:
            chain = chains[-1]
            test = self.source.text[chain.test_start:token.start]
            tool, negated = _nvidia_tool(test)
            if tool:  # the probe itself, either way
                self.off_why.append((self._range(chain.test_start, token.start), NVIDIA_TOOL_PROBE.format(tool=tool)))
            chain.arm_npu, chain.arm_tool = _tests_npu(test), "" if negated else tool
            chain.arm_start, chain.test_start = token.end, -1
        elif word in ("elif", "else", "fi"):
            chain = chains[-1]
            if chain.arm_start >= 0:
                chain.arms.append((chain.arm_start, token.start, chain.arm_npu))
                if chain.arm_tool:
                    self.off_why.append((self._range(chain.arm_start, token.start),
                                         NVIDIA_TOOL_ARM.format(tool=chain.arm_tool)))
            chain.arm_start, chain.arm_npu, chain.arm_tool = (token.end, False, "") if word == "else" else (-1, False, "")
            if word == "elif":
                chain.test_start = token.end
            elif word == "fi":
                chains.pop()
                if any(npu for _, _, npu in chain.arms):
                    for start, end, npu in chain.arms:
                        (self.on_npu if npu else self.off_npu).append(self._range(start, end))

    def _assignment(self, token: _Token, name: str) -> None:
        at = token.start + len(name) + 1
        self.assignments.append(Assignment(
            name, token.text[len(name) + 1:], self._range(token.start, token.end),
            self._range(token.start, token.start + len(name)), self._range(at, token.end), token.literal))

    def _add_command(self, words: list[_Token]) -> None:
        self.commands.append(Command(tuple(Word(w.text, self._range(w.start, w.end), w.literal) for w in words)))
