"""Packaging files as documents: requirements files, pyproject.toml, setup.cfg,
environment.yml, Dockerfiles and shell launch scripts, each read by a small parser of its
own into the items the NPU5xx rules check (a requirement, a wheel index URL, a base image),
with exact positions. (`setup.py` is Python: its `install_requires` strings reach the same
rules through the ordinary walk. A launch script's assignments and commands are
shell_script.py's; the settings of YAML and JSON configs and compose files are config_files.py's.)"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .model import Range
from .dockerfile import Dockerfile
from .shell_script import ShellScript, shell_shebang
from .text import SourceText

REQUIREMENT = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*"
    r"(?P<spec>(?:===|==|~=|!=|<=|>=|<|>|=)\s*[^\s,;#'\"]+(?:\s*,\s*(?:===|==|~=|!=|<=|>=|<|>)\s*[^\s,;#'\"]+)*)?")
URL = re.compile(r"https?://[^\s'\"\\,\]]+")
QUOTED = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"|'([^'\n]*)'")
VALUE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
                           "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--platform",
                           "--python-version", "--implementation", "--abi", "--upgrade-strategy", "-e",
                           "--editable", "--src", "--cache-dir", "--log", "--progress-bar", "--trusted-host"})
# a marker's test of the platform, and the value each variable has on Linux
PLATFORM_TEST = re.compile(r"(?P<variable>sys_platform|platform_system|os_name)\s*(?P<op>==|!=)\s*"
                           r"(?P<quote>['\"])(?P<value>[^'\"]*)(?P=quote)")
LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}
LINE_END = re.compile(r"\r\n|\r|\n")
HEAD_CHARS = 4096
DOCKER_START = re.compile(r"[ \t]*(?:FROM|ARG)[ \t]+\S", re.IGNORECASE)
SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".sbatch", ".slurm")
COMPOSE_SUFFIXES = (".yml", ".yaml")
CONFIG_SUFFIXES = (".yml", ".yaml", ".json", ".jsonc")  # a framework's config when its keys say so (config_files.py)


@dataclass(frozen=True, slots=True)
class Item:
    """One thing a packaging file names."""

    kind: str  # "requirement" | "index" | "image"
    text: str  # the requirement, URL or image as written
    range: Range
    name: str = ""  # requirement: normalised project name (PEP 503)
    name_range: Range | None = None
    spec: str = ""  # requirement: the version specifier as written ("==2.1.0+cu121")
    spec_range: Range | None = None
    conda: bool = False  # a conda package (environment.yml), not a pip one
    document: str = ""  # the document kind it came from
    written: str = ""  # image: the name as written, when `text` has ARG defaults put in
    wheel: bool = False  # requirement: a wheel's file name, whose `spec` is its version (no fix renames a file)


def document_kind(path: str | None, start: str = "") -> str | None:
    """The kind of packaging file `path` names, or None for Python and anything else. `start` is
    the file's text (its first HEAD_CHARS characters suffice), read only where the name leaves
    the kind open: a file whose name has no suffix is a launch script when its first line is a
    shell's `#!`, and any other file in a folder named `docker` is a Dockerfile when its first
    instruction is a `FROM` or an `ARG` (the one instruction that may come before the first FROM)."""
    if not path:
        return "shell" if shell_shebang(_head_line(start)) else None
    p = PurePath(path)
    name = p.name
    lower = name.lower()
    if lower.endswith((".py", ".pyi", ".ipynb")):
        return None
    if lower == "pyproject.toml":
        return "pyproject"
    if lower == "setup.cfg":
        return "setup.cfg"
    if lower in ("environment.yml", "environment.yaml") or (lower.startswith("environment") and
                                                           lower.endswith((".yml", ".yaml"))):
        return "environment"
    if lower.endswith(COMPOSE_SUFFIXES) and lower.startswith(("docker-compose", "compose")):
        return "compose"
    if lower.endswith(CONFIG_SUFFIXES):
        return "config"
    if name == "Dockerfile" or name.startswith("Dockerfile.") or lower.endswith(".dockerfile") \
            or lower == "containerfile":
        return "dockerfile"
    if lower.endswith((".txt", ".in")) and (lower.startswith("requirements") or p.parent.name == "requirements"):
        return "requirements"
    if lower.endswith(SHELL_SUFFIXES) or ("." not in name and shell_shebang(_head_line(start))):
        return "shell"
    if p.parent.name == "docker" and DOCKER_START.match(_head_line(start)):
        return "dockerfile"
    return None


def _head_line(text: str) -> str:
    """What `document_kind` reads of a file's text (its first HEAD_CHARS characters): the first
    line, or when that is a comment but not a `#!`, the first line that is neither blank nor a
    comment (a Dockerfile's first instruction, after its license header)."""
    lines = LINE_END.split(text[:HEAD_CHARS])
    if lines[0].startswith("#!"):
        return lines[0]
    return next((line for line in lines if line.strip() and not line.lstrip().startswith("#")), "")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_at(text: str, line: int, col: int, document: str, conda: bool = False) -> Item | None:
    """The requirement `text` (which starts at `line`, `col`), or None when it is not one."""
    match = REQUIREMENT.match(text)
    if match is None or match.end("name") == 0:
        return None
    rest = text[match.end():].lstrip()
    if rest and rest[0] not in ";@#" and not conda:
        return None  # free text, not a requirement
    if rest[:1] == ";" and not_on_linux(rest[1:].split(" #", 1)[0]):
        return None  # never installed on an Ascend host (Linux)
    spec = match.group("spec") or ""
    name_range = Range(line, col + match.start("name"), line, col + match.end("name"))
    spec_range = Range(line, col + match.start("spec"), line, col + match.end("spec")) if spec else None
    end = len(text.rstrip())
    return Item("requirement", text.strip(), Range(line, col, line, col + end), normalise(match.group("name")),
                name_range, spec, spec_range, conda, document)


def wheel_at(text: str, line: int, col: int, document: str) -> Item | None:
    """The project and version a wheel's file name gives (`name-version(-build)?-python-abi-platform.whl`,
    PEP 427), a local file or the last part of a URL: `flash_attn-2.7.4+cu12torch2.6-cp311-cp311-linux_x86_64.whl`."""
    at = text.rfind("/") + 1
    parts = text[at:-4].split("-")
    if len(parts) not in (5, 6) or not REQUIREMENT.fullmatch(parts[0]):
        return None
    start = col + at
    name_range = Range(line, start, line, start + len(parts[0]))
    version_start = name_range.end_col + 1
    return Item("requirement", text[at:], Range(line, start, line, col + len(text)), normalise(parts[0]), name_range,
                parts[1], Range(line, version_start, line, version_start + len(parts[1])), document=document,
                wheel=True)


def not_on_linux(marker: str) -> bool:
    """Whether an environment marker is false on every Linux host: each of its `or` operands
    has an `and` operand that needs another platform (`sys_platform == 'darwin'`,
    `platform_system != "Linux"`, `os_name == 'nt'`). A marker with parentheses is not read."""
    if "(" in marker:
        return False
    return all(any(_other_platform(term) for term in re.split(r"\s+and\s+", either))
               for either in re.split(r"\s+or\s+", marker.strip()))


def _other_platform(term: str) -> bool:
    match = PLATFORM_TEST.fullmatch(term.strip())
    if match is None:
        return False
    linux = LINUX[match.group("variable")]
    return (match.group("value") == linux) == (match.group("op") == "!=")


def _strip_comment(line: str) -> str:
    """The line before a `#` comment (at the start or after whitespace, as pip reads it)."""
    for match in re.finditer(r"(?:^|\s)#", line):
        return line[:match.start()]
    return line


def _urls(source: SourceText, document: str) -> list[Item]:
    items = []
    for index, line in enumerate(source.lines):
        code = _strip_comment(line)
        for match in URL.finditer(code):
            items.append(Item("index", match.group(), Range(index, match.start(), index, match.end()),
                              document=document))
    return items


def _requirements(source: SourceText) -> list[Item]:
    items = []
    for index, line in enumerate(source.lines):
        code = _strip_comment(line).rstrip("\r\n")
        stripped = code.lstrip()
        if not stripped or stripped.startswith(("-", "http://", "https://", "git+", ".", "/")):
            continue
        item = requirement_at(stripped.split(" --", 1)[0], index, len(code) - len(stripped), "requirements")
        if item is not None:
            items.append(item)
    return items


def _pyproject(source: SourceText) -> list[Item]:
    try:
        data = tomllib.loads(source.text)
    except tomllib.TOMLDecodeError:
        return []
    wanted: set[str] = set()
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    groups = [project.get("dependencies"), data.get("build-system", {}).get("requires")]
    for table in (project.get("optional-dependencies"), data.get("dependency-groups")):
        if isinstance(table, dict):
            groups.extend(table.values())
    for group in groups:
        if isinstance(group, list):
            wanted.update(d for d in group if isinstance(d, str))
    items = []
    for index, line in enumerate(source.lines):
        if '"' not in line and "'" not in line:
            continue
        for match in QUOTED.finditer(_strip_comment(line) if "#" in line else line):
            body = match.group(1) if match.group(1) is not None else match.group(2)
            if body in wanted and "\\" not in body:
                item = requirement_at(body, index, match.start() + 1, "pyproject")
                if item is not None:
                    items.append(item)
    return items


# an extra named for the GPU (`gpu`, `cuda`, `cu128`, `marlin-cuda12`, `nvidia`): what its users install only for CUDA
GPU_EXTRA = re.compile(r"(?:^|[-_])(?:gpu|cuda\d*|cu\d+|nvidia)(?:$|[-_])")
NPU_EXTRA = re.compile(r"(?:^|[-_])(?:npu|ascend)(?:$|[-_])")
EXTRA_TABLE = re.compile(r"\[\s*(?:project\.optional-dependencies|dependency-groups)\s*\]")
EXTRA_KEY = re.compile(r"""\s*["']?([A-Za-z0-9][\w.-]*)["']?\s*=\s*\[""")
# a uv source's `{ ..., extra = "gpu" }`, a marker's `extra == 'gpu'`
EXTRA_OF_SOURCE = re.compile(r"""\bextra\s*==?\s*["']([\w.-]+)["']""")
GPU_EXTRA_WHY = (" (In the extra `{name}`, named for the GPU: installed only where its users choose it; on an Ascend host "
                 "leave it out{npu}.)")
PACKAGE_EXTRA_WHY = (" (In the extra `{name}`, named for what it installs: installed only where its users ask for it; on an "
                     "Ascend host leave it out{npu}.)")
QUOTED_NAME = re.compile(r"""["']\s*([A-Za-z0-9][\w.-]*)""")


def extra_why(extra: str, packages: Iterable[str], npu: str = "") -> str | None:
    """Why what an extra lists is off the NPU: the extra is named for the GPU (`gpu`, `cuda12`), or
    for a package it installs (`flash = ["flash-attn"]`, `faiss-gpu`); `npu`: the tail naming the
    NPU's own extra. None for an extra named for a purpose (`train = ["flash-attn", ...]`)."""
    lowered = extra.lower()
    if GPU_EXTRA.search(lowered):
        return GPU_EXTRA_WHY.format(name=extra, npu=npu)
    words = set(re.split(r"[-_.]", lowered))
    if any(words & set(re.split(r"[-_.]", package.lower())) for package in packages):
        return PACKAGE_EXTRA_WHY.format(name=extra, npu=npu)
    return None


def gpu_extras(source: SourceText) -> list[tuple[Range, str]]:
    """The lines of a pyproject.toml's optional dependencies (or dependency groups) named for the GPU or
    for a package they list (extra_why), and of the sources (uv's `[tool.uv.sources]`) given for an extra
    named for the GPU, with why they are off the NPU."""
    lines = source.lines
    found: list[tuple[int, int, str, list[str]]] = []  # (first line, last line, the extra's name, its packages)
    names: set[str] = set()
    table = False
    index = 0
    while index < len(lines):
        code = _strip_comment(lines[index]).rstrip("\r\n")
        if code.lstrip().startswith("["):
            table = EXTRA_TABLE.match(code.strip()) is not None
        elif table and (key := EXTRA_KEY.match(code)) is not None:
            names.add(key.group(1))
            last = index
            while "]" not in _strip_comment(lines[last]).partition("=")[2 if last == index else 0] \
                    and last + 1 < len(lines):
                last += 1
            listed = "".join(_strip_comment(line) for line in lines[index:last + 1]).partition("=")[2]
            found.append((index, last, key.group(1), QUOTED_NAME.findall(listed)))
            index = last
        elif (extra := EXTRA_OF_SOURCE.search(code)) is not None and GPU_EXTRA.search(extra.group(1).lower()):
            found.append((index, index, extra.group(1), []))
        index += 1
    npu = next((n for n in sorted(names) if NPU_EXTRA.search(n.lower())), None)
    tail = f", and install the extra `{npu}`" if npu else ""
    return [(Range(first, 0, last, len(lines[last])), why) for first, last, name, packages in found
            if (why := extra_why(name, packages, tail)) is not None]


def _setup_cfg(source: SourceText) -> list[Item]:
    items, section, in_list = [], "", False
    for index, line in enumerate(source.lines):
        code = _strip_comment(line).rstrip("\r\n")
        if not code.strip():
            continue
        if code.startswith("["):
            section, in_list = code.strip().strip("[]").strip(), False
            continue
        indented = code[0].isspace()
        if not indented:
            key, sep, value = code.partition("=")
            in_list = bool(sep) and (section == "options.extras_require" or
                                     (section == "options" and key.strip() in ("install_requires", "setup_requires")))
            if not in_list or not value.strip():
                continue
            start = len(key) + 1 + (len(value) - len(value.lstrip()))
            item = requirement_at(value.strip(), index, start, "setup.cfg")
        elif in_list:
            stripped = code.lstrip()
            item = requirement_at(stripped, index, len(code) - len(stripped), "setup.cfg")
        else:
            continue
        if item is not None:
            items.append(item)
    return items


def _environment(source: SourceText) -> list[Item]:
    """Read `dependencies:` line by line (no YAML library on the linting path): conda specs
    (`pytorch-cuda=12.1`, `nvidia::cudatoolkit`) and the pip list under `- pip:`."""
    items, in_deps, pip_indent = [], False, -1
    for index, line in enumerate(source.lines):
        code = _strip_comment(line).rstrip("\r\n")
        if not code.strip():
            continue
        indent = len(code) - len(code.lstrip())
        if indent == 0:
            in_deps = code.strip() == "dependencies:"
            pip_indent = -1
            continue
        stripped = code.lstrip()
        if not in_deps or not stripped.startswith("- "):
            continue
        if pip_indent >= 0 and indent <= pip_indent:
            pip_indent = -1
        value = stripped[2:].strip()
        if value.rstrip(":") == "pip" and value.endswith(":"):
            pip_indent = indent
            continue
        col = indent + 2 + (len(stripped[2:]) - len(stripped[2:].lstrip()))
        if value[:1] in "\"'" and value[-1:] == value[:1]:
            value, col = value[1:-1], col + 1
        conda = pip_indent < 0
        if conda and "::" in value:
            channel, _, value = value.partition("::")
            col += len(channel) + 2
        item = requirement_at(value, index, col, "environment", conda)
        if item is not None:
            items.append(item)
    return items


def _dockerfile(dockerfile: Dockerfile) -> list[Item]:
    """Its base images (with the ARG defaults put in) and what its RUN lines install."""
    images = [Item("image", image.resolved, image.range, document="dockerfile", written=image.written)
              for image in dockerfile.images]
    return images + _shell(dockerfile.source, dockerfile.script, "dockerfile")


def _shell(source: SourceText, script: ShellScript | None = None, document: str = "shell") -> list[Item]:
    """The requirements `pip install` (`pip3`, `python -m pip`, `uv pip`) names in a script;
    its paths, URLs and `$VARIABLES` are not requirements, except a wheel's file name (wheel_at)."""
    items = []
    for command in (script or ShellScript(source)).commands:
        words = [w.text for w in command.words]
        at = next((i for i in range(len(words) - 1) if words[i].rpartition("/")[2] in ("pip", "pip3")
                   and words[i + 1] in ("install", "download")), None)
        if at is None or not (at == 0 or words[:at] == ["uv"] or (at == 2 and words[1] == "-m"
                                                                   and words[0].rpartition("/")[2].startswith("python"))):
            continue
        skip_next = False
        for word in command.words[at + 2:]:
            if skip_next:
                skip_next = False
                continue
            if word.text.startswith("-"):
                skip_next = word.text in VALUE_OPTIONS
                continue
            r = word.range
            if not word.literal or r.start_line != r.end_line:
                continue
            quoted = source.line(r.start_line)[r.start_col] in "\"'"
            if len(word.text) + (2 if quoted else 0) != r.end_col - r.start_col:
                continue  # escapes inside: the columns would not match the text
            col = r.start_col + quoted
            item = wheel_at(word.text, r.start_line, col, document) if word.text.endswith(".whl") else \
                None if "/" in word.text else requirement_at(word.text, r.start_line, col, document)
            if item is not None:
                items.append(item)
    return items


PARSERS = {"requirements": _requirements, "pyproject": _pyproject, "setup.cfg": _setup_cfg,
           "environment": _environment}


def items_of(kind: str, source: SourceText, script: ShellScript | None = None,
             dockerfile: Dockerfile | None = None) -> list[Item]:
    """What a packaging document of `kind` names: its requirements (or base images) and
    every URL outside comments (wheel indexes). `script`, `dockerfile`: a launch script's or a
    Dockerfile's parse, if the caller has one."""
    if kind == "shell":
        found = _shell(source, script)
    elif kind == "dockerfile":
        found = _dockerfile(dockerfile or Dockerfile(source))
    else:
        found = PARSERS[kind](source)
    return found + _urls(source, kind)


def string_requirement(source: SourceText, node: ast.Constant, value: str) -> Item | None:
    """A requirement written as a Python string literal (setup.py), positioned inside
    the quotes when the literal is a plain one-line string."""
    whole = source.range_of(node)
    line, col = whole.start_line, whole.start_col
    text = source.line(line)
    plain = node.end_lineno == node.lineno and text[col:col + 1] in "\"'" and text[col:col + 3] not in ('"""', "'''")
    if plain and text[col + 1:col + 1 + len(value)] == value:
        return requirement_at(value, line, col + 1, "setup.py")
    item = requirement_at(value, line, col, "setup.py")
    if item is None:
        return None
    return Item("requirement", item.text, whole, item.name, whole, item.spec, whole if item.spec else None,
                document="setup.py")
