"""Fixes in the portable style (`fix-style = "portable"`): the device-agnostic form of a
table row (mappings/torch/portable.toml), which runs on CUDA, on the NPU (torch_npu registers
`npu` as the accelerator) and on the CPU alike, beside the row's `torch.npu` fix; `styled`
orders the two as the settings ask. A file's portable fixes share one device, bound once
below its imports (`accelerator_device = torch.accelerator.current_accelerator(...) or
torch.device("cpu")`): the fixes of one pass each carry that same edit, made once."""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from ..engine.checker import Checker, Reference
from ..engine.fixes import writes_npu
from ..engine.model import Applicability, Edit, Fix, Range
from ..engine.walk import StringContext, last_name
from ..knowledge.portable import Form, load_portable, version_tuple
from .call_arguments import keyword
from .literal_text import literal_text_spans

PORTABLY = "Fix portably: "
# A string literal alone: its prefix, its quote, its text (no implicit concatenation).
STRING_LITERAL = re.compile(r"""(?P<prefix>[rRuU]?)(?P<quote>'''|\"\"\"|'|")(?P<body>.*)(?P=quote)""", re.S)
# What ends a line whose next line continues an expression: an opening bracket, a comma, an operator.
CONTINUED = frozenset("([{,\\+-*/%&|^<>=@~")
# The most lines below the imports the device's binding is read over (a blank line, a formatter's wrapping).
BINDING_LINES = 6
# What a file does with the device's name (device_name).
BOUND, FREE, TAKEN = "bound", "free", "taken"
MAX_READ = 1_000_000  # characters: a longer text naming the device is not parsed whole (its AST would be too large)


# --- the order of the two styles ----------------------------------------------------------
def styled(checker: Checker, npu: Fix | None, portable: Fix | None, form: Form | None) -> tuple[tuple[Fix, ...], str]:
    """(the fixes in the order the settings prefer, a note for the message). `npu` style:
    torch_npu's fix first, the portable one offered beside it. `portable` style: the portable
    fix first; without one, a fix that writes NPU-only names is shown but never applied
    (fix-all must not write `torch.npu` into a file meant to run everywhere), one that writes
    none (`apex`'s FusedLayerNorm → `torch.nn.LayerNorm`) stays; and where the project pins a
    torch older than the portable form needs, torch_npu's fix first, with a note saying why."""
    if portable is None:
        state, why = device_name(checker) if form is not None and uses_binding(form) else (FREE, "")
        note = f" No portable fix: {why}." if state == TAKEN and checker.settings.fix_style == "portable" else ""
        if npu is not None and checker.settings.fix_style == "portable" and writes_npu(npu):
            return (replace(npu, applicability=Applicability.DISPLAY, style="npu"),), note
        return ((npu,) if npu is not None else ()), note
    portable = replace(portable, style="portable")
    if npu is None:
        return (portable,), ""
    npu = replace(npu, style="npu")
    if checker.settings.fix_style == "npu":
        return (npu, portable), ""
    pin = older_pin(checker, form)
    if pin is not None:
        return (npu, replace(portable, applicability=Applicability.DISPLAY)), (
            f" Fixed for the NPU: the project pins torch `{pin}`, and the portable form needs torch {form.torch}.")
    return (portable, npu), ""


def older_pin(checker: Checker, form: Form | None) -> str | None:
    """The project's torch pin when it allows a release older than `form` needs (and the
    device binding, which every form but a plain rename uses)."""
    if form is None or checker.project is None:
        return None
    pin = checker.project.pin("torch")
    if pin is None:
        return None
    needs = max(form.needs, version_tuple(load_portable().binding_torch)) if uses_binding(form) else form.needs
    return pin if lowest_allowed(pin) < needs else None


def uses_binding(form: Form) -> bool:
    """Whether the form's fix writes the device (a branch tests its type)."""
    return "{device}" in form.replacement + form.arguments + "".join(v for _, v in form.keywords) or \
        any("{device}" in v for kws in form.by_call.values() for _, v in kws) or \
        any(form is branch for branch in load_portable().branches.values())


def lowest_allowed(spec: str) -> tuple[int, ...]:
    """The lowest release a version specifier allows (`>=2.1,<2.3` → (2, 1); `==2.8.*`,
    conda's `=2.8` → (2, 8)); (0,) when it sets no lower bound (`<2.3`, `!=2.0`)."""
    lowest: tuple[int, ...] = (0,)
    for clause in spec.split(","):
        found = re.match(r"\s*(===|==|~=|>=|>|=)\s*v?([0-9][0-9.]*)", clause)
        if found:
            lowest = max(lowest, tuple(int(p) for p in found.group(2).strip(".").split(".")))
    return lowest


# --- the device binding -------------------------------------------------------------------
def binding_edits(checker: Checker) -> list[Edit | None] | None:
    """The edits that bind the file's device below its imports (none once it is bound), with
    the file's name for torch (`import torch as t`); None where the file binds the name to
    something else (device_name), or imports nothing of torch at its top (a configuration
    file, a module that imports torch lazily, in a function: neither is made to import it at
    once)."""
    portable = load_portable()
    state, _ = device_name(checker)
    if state != FREE:
        return [] if state == BOUND else None
    scope = checker.module.scope
    if not any(q == "torch" or q.startswith("torch.") for q in scope.imports.values()):
        return None
    aliases = sorted((name != "torch", name) for name, qualname in scope.imports.items() if qualname == "torch")
    alias = aliases[0][1] if aliases else None  # `torch` itself where the file binds it
    if alias is None:
        return [checker.require_name("torch"), checker.below_imports(portable.binding_line())]
    return [checker.below_imports(re.sub(r"\btorch\.", alias + ".", portable.binding_line()))]


def device_name(checker: Checker) -> tuple[str, str]:
    """What the file does with the device's name, read from its whole text once per analysis
    (an edit analysed alone reads the same: Checker.text_fact): BOUND where the one thing
    that binds it is the fixes' own statement below the imports, FREE where nothing does,
    TAKEN (and why, for the message) where anything else does: an assignment anywhere, an
    argument (a lambda's too), a loop or comprehension variable, `global`, a class body's
    name, an import, an `except ... as`. A comment or a string naming it is neither."""
    return checker.text_fact("portable device name", read_device_name)


def read_device_name(checker: Checker) -> tuple[str, str]:
    name = load_portable().binding
    text = checker.source.text
    if name not in text or re.search(rf"\b{name}\b", text) is None:  # most files: no need to parse
        return FREE, ""
    if len(text) > MAX_READ:
        return TAKEN, f"the file names `{name}` and is too long to read what binds it"
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return TAKEN, f"the file names `{name}` and does not parse, so what binds it cannot be read"
    own = own_binding(checker, tree.body, name)
    for node in ast.walk(tree):
        what = binds(node, name)
        if what and node is not own:
            line = getattr(node, "lineno", 0)  # every node that binds a name has one
            return TAKEN, f"{what} on line {line} binds `{name}`, the name the portable fixes give the device"
    return (BOUND if own is not None else FREE), ""


def own_binding(checker: Checker, body: list[ast.stmt], name: str) -> ast.Name | None:
    """The target of the fixes' binding, `<name> = <...>.current_accelerator(...)...`, where
    `Checker.below_imports` puts it: the first statement below the imports, after blank and comment
    lines only (isort puts a blank line there), ending within BINDING_LINES of them. A binding
    written elsewhere binds the name "otherwise" (a use might come before it)."""
    first = checker.module.import_line
    stmt = next((s for s in body if s.lineno > first), None)
    if type(stmt) is not ast.Assign or stmt.end_lineno - first > BINDING_LINES:
        return None
    target = stmt.targets[0]
    if len(stmt.targets) == 1 and type(target) is ast.Name and target.id == name and \
            any(type(node) is ast.Call and last_name(node.func) == "current_accelerator" for node in ast.walk(stmt.value)):
        return target
    return None


def binds(node: ast.AST, name: str) -> str:
    """What kind of statement `node` is when it binds `name` (or may: `from m import *`), else ""."""
    if isinstance(node, ast.Name):
        return "an assignment" if node.id == name and type(node.ctx) is not ast.Load else ""
    if isinstance(node, ast.arg):
        return "an argument" if node.arg == name else ""
    if isinstance(node, ast.alias):
        return "an import" if node.name == "*" or (node.asname or node.name.partition(".")[0]) == name else ""
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return "a `global` statement" if name in node.names else ""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return "a definition" if node.name == name else ""
    if isinstance(node, ast.ExceptHandler):
        return "an `except ... as`" if node.name == name else ""
    # a `match` pattern's capture, a type parameter
    return "a pattern" if name in (getattr(node, "name", None), getattr(node, "rest", None)) else ""


def portable_fix(checker: Checker, title: str, applicability: Applicability, *edits: Edit | None) -> Fix | None:
    binding = binding_edits(checker)
    if binding is None:
        return None
    return checker.fix(PORTABLY + title, applicability, *binding, *edits)


# --- calls: arguments put first, keywords added -------------------------------------------
def argument_edits(checker: Checker, call: ast.Call, func_end: tuple[int, int], arguments: str,
                   keywords: tuple[tuple[str, str], ...]) -> list[Edit] | None:
    """Insert `arguments` first in `call` and the `keywords` it does not pass after its last
    argument; None when its parentheses are not where they can be edited (a comment between
    name and `(`)."""
    portable = load_portable()
    line, col = func_end
    opening = checker.source.line(line)[col:]
    if not opening.lstrip().startswith("("):
        return None
    after_open = (line, col + opening.index("(") + 1)
    passed = [*call.args, *(kw.value for kw in call.keywords)]
    edits = []
    if arguments:
        if not passed:
            separator = ""
        elif checker.source.line(line)[after_open[1]:].strip():
            separator = ", "
        else:
            separator = ","  # the arguments start on the next line
        edits.append(Edit(Range(*after_open, *after_open), portable.fill(arguments) + separator))
    added = [f"{name}={portable.fill(value)}" for name, value in keywords if keyword(call, name) is None]
    if added:
        if passed:
            last = max((checker.range(node) for node in passed), key=lambda r: (r.end_line, r.end_col))
            at = (last.end_line, last.end_col)
        else:
            rng = checker.range(call)
            at = (rng.end_line, rng.end_col - 1)
        comma = ", " if passed or arguments else ""
        edits.append(Edit(Range(*at, *at), comma + ", ".join(added)))
    return edits


# --- qualified names ----------------------------------------------------------------------
def api_fix(checker: Checker, ref: Reference, written: str, edits: list[Edit | None],
            applicability: Applicability) -> Fix | None:
    """`torch.cuda.x` → its torch.accelerator / torch.amp / device-module form (`written`: the
    new name as the file spells it, `edits` the import it may need)."""
    portable = load_portable()
    form = portable.apis.get(ref.qualname)
    if form is None:
        return None
    call = ref.call if type(ref.call) is ast.Call and ref.call.func is ref.node else None
    if call is None and (form.guard is not None or form.arguments or form.keywords or form.methods):
        return None  # a reference that is not called: nothing to guard or to pass
    written = portable.fill(written)
    node_range = checker.range(ref.node)
    title = f"Replace `{ref.qualname}` with `{portable.fill(form.replacement)}`"
    if form.methods:
        method_edits = guarded_methods(checker, call, written, form)
        if method_edits is None:
            return None
        edits = [*edits, checker.replace(node_range, written), *method_edits]
        *others, last = [f"`{name}()`" for name, _ in form.methods]
        title += f", and call its {', '.join(others)} and {last} only where there is an accelerator ({form.note})"
    elif form.guard is not None:
        edit, title = guarded(checker, ref, call, written, form, title)
        edits = [*edits, edit]
    else:
        edits = [*edits, checker.replace(node_range, written)]
    if form.arguments or form.keywords:
        more = argument_edits(checker, call, (node_range.end_line, node_range.end_col), form.arguments, form.keywords)
        if more is None:
            return None
        edits += more
    if uses_binding(form):
        return portable_fix(checker, title, applicability, *edits)
    return checker.fix(PORTABLY + title, applicability, *edits)


def guarded(checker: Checker, ref: Reference, call: ast.Call, written: str, form: Form, title: str) -> tuple[Edit, str]:
    """The call where there is an accelerator, else the value the CUDA call gave on the CPU:
    `torch.accelerator.empty_cache()` raises without one where `torch.cuda.empty_cache()` did
    nothing."""
    rng = checker.range(call)
    head = checker.range(ref.node)
    new_call = written + checker.source.segment(Range(head.end_line, head.end_col, rng.end_line, rng.end_col))
    title += f", run only where there is an accelerator (without one it raises, where `{ref.qualname}` did not)"
    return guard_edit(checker, rng, new_call, written.partition(".")[0], form.guard), title


def guard_edit(checker: Checker, rng: Range, new_call: str, torch_name: str, value: str) -> Edit:
    """`new_call` (at `rng`) only where there is an accelerator, else `value`: a call alone on
    its line becomes an `if`; elsewhere a conditional expression."""
    available = torch_name + ".accelerator.is_available()"
    line = checker.source.line(rng.start_line)
    if value == "None" and rng.start_line == rng.end_line and statement_alone(checker, rng):
        return checker.replace(rng, f"if {available}:\n{line[:rng.start_col]}    {new_call}")
    return checker.replace(rng, f"({new_call} if {available} else {value})")


def guarded_methods(checker: Checker, call: ast.Call, written: str, form: Form) -> list[Edit] | None:
    """The guards of the methods (`form.methods`) of what `call` makes: `start =
    torch.cuda.Event(...)`, then `start.record()` and `start.elapsed_time(end)` only where there
    is an accelerator. None unless `call` is bound to a name that its function binds once and
    uses only through those methods, or as the argument of one of them."""
    rng = checker.range(call)
    scope, name, parents = binding_scope(checker, rng)
    if name is None:
        return None
    methods = dict(form.methods)
    edits = []
    for node in ast.walk(scope):
        if type(node) is not ast.Name or node.id != name:
            continue
        if type(node.ctx) is not ast.Load:
            if checker.range(node).start_line != rng.start_line:
                return None  # bound again
            continue
        owner = parents[node]
        method = parents.get(owner)
        if type(owner) is ast.Attribute and owner.attr in methods and type(method) is ast.Call and \
                method.func is owner:
            edits.append(guard_edit(checker, checker.range(method), checker.source.segment(checker.range(method)),
                                    written.partition(".")[0], methods[owner.attr]))
        elif not (type(owner) is ast.Call and node in owner.args and type(owner.func) is ast.Attribute
                  and owner.func.attr in methods):
            return None
    return edits


def binding_scope(checker: Checker, rng: Range) -> tuple[ast.AST, str | None, dict[ast.AST, ast.AST]]:
    """The innermost function of the statement being run that holds the call at `rng`, the name
    its statement `name = <the call>` binds (None when the call is not alone on the right of such
    an assignment, or not in a function), and each node's parent in that function. Only a
    function: the walk hands the checker one statement at a time, so the uses of a module-level
    binding are in statements this one cannot see (and re-analysing an edit sees only its own)."""
    scope = None
    for func, _scope in checker.events.functions:
        if func.lineno - 1 <= rng.start_line <= rng.end_line <= (func.end_lineno or func.lineno) - 1 and \
                (scope is None or func.lineno >= scope.lineno):
            scope = func  # the innermost: a nested function starts after the one holding it
    if scope is None:
        return ast.Module(body=[], type_ignores=[]), None, {}
    parents = {child: node for node in ast.walk(scope) for child in ast.iter_child_nodes(node)}
    found = None
    for node in ast.walk(scope):
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name and \
                checker.range(node.value) == rng:
            found = node.targets[0].id
    return scope, found, parents


def needs_own_fix(checker: Checker, qualname: str) -> bool:
    """Whether a use of `qualname`, bound by an import whose finding carries the npu rename,
    gets a finding of its own: in the portable style, where its call needs arguments the
    import cannot give (`GradScaler()` → `torch.amp.GradScaler(accelerator_device.type)`)."""
    if checker.settings.fix_style != "portable":
        return False
    form = load_portable().apis.get(qualname)
    return form is not None and bool(form.arguments or form.keywords) and older_pin(checker, form) is None


def unused_import_fix(checker: Checker, stmt: ast.Import | ast.ImportFrom, applicability: Applicability) -> Fix | None:
    """Delete a top-level import whose names the file no longer uses: `from torch.cuda.amp
    import GradScaler, autocast` once each call is `torch.amp.*` (a name found in a string or
    a comment counts as used, as an attribute's name does not: the import then stays)."""
    rng = checker.range(stmt)
    if rng.start_col != 0 or not statement_alone(checker, rng):
        return None
    text = checker.source.text
    start, end = checker.source.offset(rng.start_line, 0), checker.source.offset(rng.end_line, rng.end_col)
    outside = text[:start] + text[end:]
    for alias in stmt.names:
        name = (alias.asname or alias.name).partition(".")[0]
        if re.search(rf"(?<![\w.]){re.escape(name)}\b", outside):  # not `torch.amp.GradScaler`
            return None
    following = rng.end_line + 1
    cut = Range(rng.start_line, 0, following, 0) if following < len(checker.source.lines) else \
        Range(rng.start_line, 0, rng.end_line, len(checker.source.line(rng.end_line)))
    return checker.fix(PORTABLY + "Remove the import, which nothing uses any more", applicability,
                       checker.replace(cut, ""))


def statement_alone(checker: Checker, rng: Range) -> bool:
    """Whether the text at `rng` is a statement of its own: alone on its line (but for a
    comment), and the line before it does not leave an expression open."""
    line = checker.source.line(rng.start_line)
    rest = line[rng.end_col:].strip()
    if line[:rng.start_col].strip() or (rest and not rest.startswith("#")):
        return False
    for index in range(rng.start_line - 1, -1, -1):
        before = checker.source.line(index).split("#", 1)[0].rstrip()
        if before:
            return before[-1] not in CONTINUED
    return True


# --- what only CUDA reads, behind a backend check -------------------------------------------
def backend_branch(checker: Checker, where: Range, npu_text: str, title: str, edits: list[Edit | None],
                   applicability: Applicability) -> Fix | None:
    """What only CUDA reads, with no form both backends share (a TF32 switch, an NCCL
    variable), behind a backend check: its statement where the device is CUDA, the same
    statement with `where` written as `npu_text` where it is the NPU. Only a statement alone
    on its line that binds no name (`torch.backends.cuda.matmul.allow_tf32 = True`,
    `os.environ["NCCL_ALGO"] = "Ring"`, `os.environ.setdefault(...)`): a name set in
    neither branch, as on the CPU, would be unbound after it."""
    if where.start_line != where.end_line:
        return None
    line = checker.source.line(where.start_line)
    code = line.split("#", 1)[0].rstrip() if "#" not in line[where.start_col:where.end_col] else line.rstrip()
    start = len(line) - len(line.lstrip())
    try:
        body = ast.parse(code[start:]).body
    except SyntaxError:
        return None
    if len(body) != 1 or not binds_no_name(body[0]) or where.end_col > len(code) or \
            not statement_alone(checker, Range(where.start_line, start, where.start_line, len(code))):
        return None
    indent, statement = line[:start], code[start:]
    npu = code[start:where.start_col] + npu_text + code[where.end_col:]
    device = load_portable().binding
    text = (f'if {device}.type == "cuda":\n{indent}    {statement}\n'
            f'{indent}elif {device}.type == "npu":\n{indent}    {npu}')
    return portable_fix(checker, title, applicability, *edits,
                        checker.replace(Range(where.start_line, start, where.start_line, len(code)), text))


def binds_no_name(stmt: ast.stmt) -> bool:
    """An assignment to an item or attribute (`os.environ[...] = v`, `torch.backends.x = v`), or
    a call that sets the environment (`os.environ.setdefault(...)`, `.update(...)`, `os.putenv(...)`):
    nothing else the program needs happens in it."""
    if type(stmt) is ast.Expr:
        func = stmt.value.func if type(stmt.value) is ast.Call else None
        if type(func) is not ast.Attribute:
            return False
        return func.attr == "putenv" or (func.attr in ("setdefault", "update") and last_name(func.value) == "environ")
    if isinstance(stmt, (ast.Assign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return all(type(t) in (ast.Subscript, ast.Attribute) for t in targets)
    return False


def switch_branch(checker: Checker, ref: Reference, npu: str, function: tuple[str, list[Edit | None]],
                  applicability: Applicability) -> Fix | None:
    """A TF32 switch: its torch.npu counterpart `npu` (`torch.npu.matmul.allow_hf32`) through
    the device's module (`function`: the module function's name as the file writes it, and
    the import it needs), so the file names no torch.npu."""
    form = load_portable().branches.get(ref.qualname)
    if form is None or not form.replacement or not npu.startswith("torch.npu."):
        return None
    name, edits = function
    module = name + "(" + load_portable().fill(form.replacement).partition("(")[2]
    return backend_branch(checker, checker.range(ref.node), module + npu[len("torch.npu"):],
                          f"Set `{ref.qualname}` on CUDA and `{npu}` on the NPU, by the device's type", edits,
                          applicability)


def variable_branch(checker: Checker, node: ast.AST, name: str, npu: str, applicability: Applicability) -> Fix | None:
    """A CUDA or NCCL variable set in the code: on CUDA as written, on the NPU as `npu`."""
    if name not in load_portable().branches:
        return None
    rng = checker.range(node)
    segment = checker.source.segment(rng)
    return backend_branch(checker, rng, segment.replace(name, npu), f"Set `{name}` on CUDA and `{npu}` on the NPU, "
                          "by the device's type", [], applicability)


# --- methods --------------------------------------------------------------------------------
def method_fix(checker: Checker, attr: str, attr_range: Range, call: ast.Call | None,
               applicability: Applicability) -> Fix | None:
    """`x.cuda()` → `x.to(accelerator_device)`, when its call passes no device of its own."""
    form = load_portable().methods.get(attr)
    if form is None or call is None or call.args or any(kw.arg not in form.parameters for kw in call.keywords):
        return None
    more = argument_edits(checker, call, (attr_range.end_line, attr_range.end_col), form.arguments, ())
    if more is None:
        return None
    shown = load_portable().fill(form.arguments)
    return portable_fix(checker, f"Replace `.{attr}()` with `.{form.replacement}({shown})`", applicability,
                        checker.replace(attr_range, form.replacement), *more)


# --- strings ----------------------------------------------------------------------------------
def device_string_fix(checker: Checker, node: ast.AST, value: str, context: StringContext,
                      applicability: Applicability) -> Fix | None:
    """`"cuda"` → `accelerator_device.type`, `"cuda:0"` → `f"{accelerator_device.type}:0"`
    (in an f-string, only its literal text); `torch.autocast("cuda")` also gets its
    keywords (off without an accelerator, as CUDA's autocast was on a CPU)."""
    portable = load_portable()
    form = portable.literals.get("device")
    if form is None or context.siblings or context.kind == "compare":
        # a key or one option among others: an expression there is no longer a name; a
        # comparison (`x.device.type == "cuda"`) tests for CUDA, and the device's type would
        # make it true for CPU tensors on a machine without an accelerator
        return None
    expression = portable.fill(form.replacement)
    rng = checker.range(node)
    if rng.start_line != rng.end_line:
        return None
    segment = checker.source.segment(rng)
    if context.keyword == "map_location" and value != "cuda":
        # torch.load cannot restore to "cpu:0": the device itself, whose current index a
        # CUDA or NPU run has set (set_device) where the string named one
        return portable_fix(checker, f"Replace `{value}` with `{portable.binding}` (the current device)",
                            Applicability.UNSAFE, checker.replace(rng, portable.binding))
    if type(node) is ast.JoinedStr:
        new = fstring_with(segment, expression)
    else:
        new = string_with(segment, value, expression)
    if new is None:
        return None
    edits: list[Edit] = [checker.replace(rng, new)]
    call = context.call if context.kind == "arg" else None
    keywords = form.by_call.get(last_name(call.func)) if call is not None else None
    if keywords and (context.keyword == "device_type" or (context.keyword is None and context.position == 0)):
        func = checker.range(call.func)
        more = argument_edits(checker, call, (func.end_line, func.end_col), "", keywords)
        if more is None:
            return None
        edits += more
    return portable_fix(checker, f"Replace `{value}` with `{new}`", applicability, *edits)


def string_with(segment: str, value: str, expression: str) -> str | None:
    found = STRING_LITERAL.fullmatch(segment)
    if found is None or found.group("prefix") in ("u", "U") or found.group("quote") in found.group("body"):
        return None  # implicitly concatenated pieces, or a u-string, which cannot become an f-string
    if value == "cuda":
        return expression
    body = found.group("body").replace("{", "{{").replace("}", "}}").replace("cuda", "{" + expression + "}")
    return f"f{found.group('prefix')}{found.group('quote')}{body}{found.group('quote')}"


def fstring_with(segment: str, expression: str) -> str | None:
    """The f-string with `cuda` in its literal text made a replacement field."""
    out, end = [], 0
    for a, b in literal_text_spans(segment, True):
        out += [segment[end:a], segment[a:b].replace("cuda", "{" + expression + "}")]
        end = b
    new = "".join(out) + segment[end:]
    return new if new != segment else None


def backend_fix(checker: Checker, node: ast.AST, context: StringContext, applicability: Applicability) -> Fix | None:
    """`init_process_group("nccl")` → `init_process_group(None)`: torch.distributed then
    takes each device's default backend (nccl for cuda, hccl for npu, gloo for cpu)."""
    form = load_portable().literals.get("backend")
    call = context.call
    if form is None or context.kind != "arg" or call is None or last_name(call.func) not in form.calls:
        return None
    if not (context.keyword == "backend" or (context.keyword is None and context.position == 0)):
        return None
    return checker.fix(PORTABLY + f"Replace the backend with `{form.replacement}` (each device's default)",
                       applicability, checker.replace(node, form.replacement))


def form_of(kind: str, name: str) -> Form | None:
    """The portable row for a table entry: an api name, a method, a literal's kind."""
    portable = load_portable()
    return {"api": portable.apis, "method": portable.methods, "literal": portable.literals,
            "branch": portable.branches, "env": portable.env}[kind].get(name)
