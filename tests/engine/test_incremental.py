"""Re-analysing only the statements an edit touches gives exactly the full analysis."""

from __future__ import annotations

import ast
import os
import random
from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine import analyzer
from ascend_lsp.engine.analyzer import TextEdit

EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "train_cuda.py").read_text()


def snapshot(analysis):
    return [(f.code, f.range, f.message, [(fix.title, fix.applicability, fix.style,
                                           [(e.range, e.new_text) for e in fix.edits]) for fix in f.fixes], f.related)
            for f in analysis.findings]


def apply(lines: list[str], first: int, last: int, new: list[str]) -> list[str]:
    return lines[:first] + new + lines[last + 1:]


BOUND = 'accelerator_device = torch.accelerator.current_accelerator() or torch.device("cpu")\n'
# The portable style's fixes hang on what the whole file binds to the device's name: lines
# that bind it otherwise (in a function too), its own binding, and the name in a comment.
NAMING = EXAMPLE.replace("\nlogger =", "\n" + BOUND + "\nlogger =", 1)
DEVICE_LINES = ["accelerator_device = 3\n", "def f(accelerator_device): return x.cuda()\n", BOUND,
                "# accelerator_device\n", "x = [y.cuda() for accelerator_device in z]\n"]


# CUDA tests held in names (engine/guards.py): a global's and an attribute's are facts of the whole
# text, a local's of its function; the lines that hold one, use one or bind the name otherwise
HELD = EXAMPLE.replace("\nlogger =", "\nUSE_GPU = torch.cuda.is_available()\n\nlogger =", 1).replace(
    "        super().__init__()\n", "        super().__init__()\n        self.gpu = torch.cuda.is_available()\n", 1)
HELD_LINES = ["USE_GPU = False\n", "self.gpu = torch.cuda.is_available()\n", "self.gpu = None\n",
              "if USE_GPU:\n    torch.cuda.synchronize()\n", "if self.gpu: torch.cuda.synchronize()\n",
              "run = torch.cuda.is_available()\n", "if run: x = x.cuda()\n", "global USE_GPU\n"]


@pytest.mark.parametrize(("settings", "text", "more"), [
    (Settings(), EXAMPLE, []),
    (Settings(fix_style="portable"), NAMING, DEVICE_LINES),
    (Settings(fix_style="portable"), EXAMPLE, DEVICE_LINES),
    (Settings(), HELD, HELD_LINES),
], ids=["npu", "portable, the device bound", "portable", "held tests"])
def test_random_line_edits_match_full_analysis(settings: Settings, text: str, more: list[str]) -> None:
    rng = random.Random(7)
    original = text.splitlines(keepends=True)
    base = analyze(text, settings)
    pool = [line for line in original if line.strip()] + ["y = x.cuda()\n", "\n", "# 注释 🚀 cuda\n",
                                                          "torch.cuda.empty_cache()\n", "def broken(:\n"] + more * 3
    reused = 0
    for _ in range(150):
        first = rng.randrange(len(original))
        last = min(len(original) - 1, first + rng.randrange(3))
        indent = original[first][: len(original[first]) - len(original[first].lstrip())].rstrip("\n")
        new = [indent + rng.choice(pool).lstrip() for _ in range(rng.randrange(0, 4))]
        text = "".join(apply(original, first, last, new))
        edit = TextEdit(first, last, len(new) - (last - first + 1))
        incremental = analyze(text, settings, previous=base, edit=edit)
        full = analyze(text, settings)
        assert snapshot(incremental) == snapshot(full), (first, last, new)
        reused += incremental.walked < full.walked
        # and a second edit on top of the first
        follow = analyze(text + "z = torch.ones(1).cuda()\n", settings, previous=incremental,
                         edit=TextEdit(len(text.splitlines()), len(text.splitlines()), 1))
        assert snapshot(follow) == snapshot(analyze(text + "z = torch.ones(1).cuda()\n", settings))
    assert reused > 50  # edits that keep the file parsing re-walk only what they touch


def test_an_edit_that_binds_the_device_elsewhere_takes_the_portable_fixes_from_every_statement() -> None:
    settings = Settings(fix_style="portable")
    old = 'import torch\n\nx = torch.ones(1).cuda()\n\ny = 1\n'
    new = 'import torch\n\nx = torch.ones(1).cuda()\n\naccelerator_device = 3\n'
    incremental = analyze(new, settings, previous=analyze(old, settings), edit=TextEdit(4, 4, 0))
    assert snapshot(incremental) == snapshot(analyze(new, settings))
    assert [fix.style for f in incremental.findings for fix in f.fixes] == ["npu"]
    # and back: the statement the edit did not touch gets its portable fix again
    again = analyze(old, settings, previous=incremental, edit=TextEdit(4, 4, 0))
    assert [fix.style for f in again.findings for fix in f.fixes] == ["portable", "npu"]


def test_editing_an_import_reanalyses_everything() -> None:
    settings = Settings()
    previous = analyze(EXAMPLE, settings)
    lines = EXAMPLE.splitlines(keepends=True)
    index = lines.index("import torch\n")
    lines[index] = "import torch_npu\nimport torch\n"
    text = "".join(lines)
    incremental = analyze(text, settings, previous=previous, edit=TextEdit(index, index, 1))
    assert snapshot(incremental) == snapshot(analyze(text, settings))
    assert not [f for f in incremental.findings if f.code == "NPU109"]


def test_an_edit_inside_a_method_rewalks_that_method_only() -> None:
    settings = Settings()
    methods = "".join(f"    def m{i}(self, x):\n        y = x.cuda()\n        return torch.cuda.synchronize()\n\n"
                      for i in range(40))
    text = f"import torch\n\n\n@decorate(torch.cuda.is_available())\nclass Big(torch.nn.Module):\n{methods}"
    base = analyze(text, settings)
    lines = text.splitlines(keepends=True)
    index = lines.index("    def m7(self, x):\n") + 1
    for new in (["        y = x.cuda()  # 改 🚀\n"], ["        y = x.npu()\n"], ["        y = x.cuda()\n", "        z = 1\n"],
                ["        y = x.cuda(\n"]):
        changed = "".join(lines[:index] + new + lines[index + 1:])
        incremental = analyze(changed, settings, previous=base, edit=TextEdit(index, index, len(new) - 1))
        full = analyze(changed, settings)
        assert snapshot(incremental) == snapshot(full)
        if not full.syntax_errors:
            assert incremental.walked == 1
            later = changed.splitlines(keepends=True)
            at = later.index("    def m30(self, x):\n") + 1
            later[at] = "        y = x.cuda().cuda()\n"
            follow = analyze("".join(later), settings, previous=incremental, edit=TextEdit(at, at, 0))
            assert follow.walked == 1
            assert snapshot(follow) == snapshot(analyze("".join(later), settings))
            assert len(follow.findings) == len(incremental.findings) + 1


def test_class_constants_are_read_together_after_an_edit() -> None:
    """An enum's string constants are judged together (CUDA is fine beside NPU = "npu"),
    so an edit anywhere in such a class must give what a full analysis gives."""
    settings = Settings()
    cases = [
        # (text, line edited, its new text)
        ('class D:\n    NPU = "npu"\n    if True:\n        CUDA = "cuda"\n        x = 1\n', 4, '        x = 2\n'),
        ('class D:\n    NPU = "npu"\n    CUDA = "cuda"\n', 1, '    print("npu")\n'),
        ('class D:\n    CUDA = "cuda"\n    x = 1\n', 2, '    NPU = "npu"\n'),
    ]
    for text, line, new in cases:
        lines = text.splitlines(keepends=True)
        edited = "".join(apply(lines, line, line, [new]))
        incremental = analyze(edited, settings, previous=analyze(text, settings), edit=TextEdit(line, line, 0))
        assert snapshot(incremental) == snapshot(analyze(edited, settings)), (text, new)


def test_a_changed_extra_table_is_read_again(tmp_path) -> None:
    table = tmp_path / "team.toml"
    row = '[[api]]\nname = "mylib.kernels"\nrule = "NPU306"\nprefix = true\nsource = "team wiki"\n'
    table.write_text(row, encoding="utf-8")
    settings = Settings(extra_mappings=(str(table),))
    text = "import mylib.kernels\n\nmylib.kernels.fused()\nx = 1\n"
    before = analyze(text, settings)
    assert {f.code for f in before.findings} == {"NPU306"}
    table.write_text("", encoding="utf-8")
    os.utime(table, (1, 1))  # a different mtime, whatever the clock's resolution
    edited = text.replace("x = 1", "x = 2")
    incremental = analyze(edited, settings, previous=before, edit=TextEdit(3, 3, 0))
    assert snapshot(incremental) == snapshot(analyze(edited, settings)) == []


BIG_CLASS = """import torch


class Big:
    from os import path

    def a(self):
        torch.cuda.synchronize()

    def b(self):
        y = 2
        return y

    def c(self):
        torch.cuda.empty_cache()
"""


def test_a_syntax_error_inside_a_method_reparses_that_method_only(monkeypatch) -> None:
    parsed: list[int] = []
    real_parse = ast.parse

    def counting_parse(source, *args, **kwargs):
        parsed.append(sum(1 for line in source.splitlines() if line.strip()))
        return real_parse(source, *args, **kwargs)

    settings = Settings()
    base = analyze(BIG_CLASS, settings)
    monkeypatch.setattr(ast, "parse", counting_parse)
    previous, text = base, BIG_CLASS
    line = BIG_CLASS.splitlines().index("        y = 2")
    for typed in ("        torch.cuda.synchronize(", "        torch.cuda.synchronize()"):
        lines = text.splitlines(keepends=True)
        new = "".join(lines[:line + 1] + [typed + "\n"] + lines[line + 1 + (typed.endswith(")")):])
        edit = TextEdit(line + 1, line + 1, 0) if typed.endswith(")") else TextEdit(line, line, 1)
        parsed.clear()
        incremental = analyze(new, settings, previous=previous, edit=edit)
        assert max(parsed) <= 5, parsed  # `class _:` and the method, never the file
        assert snapshot(incremental) == snapshot(analyze(new, settings))
        codes = [(f.code, f.range.start_line) for f in incremental.findings]
        assert ("NPU103", 7) in codes and ("NPU103", 15) in codes
        assert (("E999", line + 1) in codes) == typed.endswith("(")
        previous, text = incremental, new


def test_an_edit_that_makes_the_first_statement_a_string_makes_it_the_docstring() -> None:
    """A string that is the module's first statement is its docstring, after which a fix
    inserts its import; the broken line above it is no statement."""
    settings = Settings()
    assigned = "port torch\nDEVICE = 'cuda'\nx = y.cuda()\n"
    bare = "port torch\n'cuda'\nx = y.cuda()\n"
    for old, new in ((assigned, bare), (bare, assigned)):
        incremental = analyze(new, settings, previous=analyze(old, settings), edit=TextEdit(1, 1, 0))
        assert snapshot(incremental) == snapshot(analyze(new, settings))
    inserted = [e for f in analyze(bare, settings).findings for fix in f.fixes for e in fix.edits
                if e.new_text == "import torch_npu\n"]
    assert inserted and all(e.range.start_line == 2 for e in inserted)


def test_a_broken_member_indented_unlike_its_siblings_matches_a_full_analysis() -> None:
    """Recovery of the whole text blanks the member at the class body's indentation, which
    is the first member's: a first member indented anew changes what it blanks."""
    settings = Settings()
    line = BIG_CLASS.splitlines().index("    from os import path")
    previous, lines = analyze(BIG_CLASS, settings), BIG_CLASS.splitlines(keepends=True)
    for typed in ("    from os iport path\n", "   from os iport path\n"):
        lines[line] = typed
        text = "".join(lines)
        incremental = analyze(text, settings, previous=previous, edit=TextEdit(line, line, 0))
        assert snapshot(incremental) == snapshot(analyze(text, settings)), typed
        previous = incremental


FLASH_MODULE = '''import torch

if is_flash_attn_2_available():
    from flash_attn import flash_attn_func
else:
    flash_attn_func = None


class FlashAttention2:
    def forward(self, q, k, v):
        return flash_attn_func(q, k, v)


def unpadded(q, k, v):
    return flash_attn_func(q, k, v)
'''


def test_edits_beside_an_opt_in_import_match_full_analysis() -> None:
    """A call of a name only opt-in imports bind is info (rules/opt_in_imports.py): what an edit
    elsewhere (an import in a function, the `else:` binding, the guard) does to it is what a full
    analysis finds."""
    settings = Settings(select=("NPU302",))
    original = FLASH_MODULE.splitlines(keepends=True)
    base = analyze(FLASH_MODULE, settings)
    assert [(f.range.start_line + 1, f.severity.name) for f in base.findings] == [
        (4, "INFO"), (11, "INFO"), (15, "INFO")]
    pool = ["from flash_attn import flash_attn_func\n", "flash_attn_func = None\n", "if USE_FLASH:\n",
            "pass\n", "return flash_attn_func(q, k, v)\n", "\n", "def broken(:\n", "import flash_attn.(\n"]
    rng = random.Random(3)
    for _ in range(200):
        first = rng.randrange(len(original))
        last = min(len(original) - 1, first + rng.randrange(2))
        indent = original[first][: len(original[first]) - len(original[first].lstrip())].rstrip("\n")
        new = [indent + rng.choice(pool) for _ in range(rng.randrange(0, 3))]
        text = "".join(apply(original, first, last, new))
        edit = TextEdit(first, last, len(new) - (last - first + 1))
        assert snapshot(analyze(text, settings, previous=base, edit=edit)) == snapshot(analyze(text, settings)), \
            (first, last, new)


# early exits past a failed CUDA test in a loop's body and in an `if`'s (engine/guards.py: block_exits)
EXITS = """import torch


def restore(states, device):
    for key, state in states.items():
        if key != "default":
            if not torch.cuda.is_available():
                continue
            torch.cuda.set_rng_state(state)
        if device.type != "cuda":
            break
        torch.cuda.synchronize()
"""


@pytest.mark.parametrize(("first", "last", "new"), [
    (7, 7, []),  # the exit removed: the call is reported on its own
    (7, 7, ["                print(key)\n"]),  # no exit
    (7, 7, ["                continue\n", "            torch.cuda.init()\n"]),  # one more call past it
    (9, 9, ["        if device.type == 'cuda':\n"]),  # a test that passes with CUDA exits
    (11, 11, ["        torch.cuda.synchronize()\n", "        torch.cuda.init()\n"]),
    (5, 6, ["        if key != 'default' and not torch.cuda.is_available():\n"]),
])
def test_edits_of_early_exits_match_full_analysis(first: int, last: int, new: list[str]) -> None:
    settings = Settings(select=("NPU1",))
    base = analyze(EXITS, settings)
    # the two tests take the calls past their exits
    assert [(f.code, f.range.start_line, len(f.related)) for f in base.findings] == [("NPU103", 6, 1), ("NPU101", 9, 1)]
    text = "".join(apply(EXITS.splitlines(keepends=True), first, last, new))
    incremental = analyze(text, settings, previous=base, edit=TextEdit(first, last, len(new) - (last - first + 1)))
    full = analyze(text, settings)
    assert snapshot(incremental) == snapshot(full)
    assert snapshot(full) != snapshot(base)


# Classes whose members' findings read one another (engine/backend_members.py): one with a method named for a
# device beside its NPU one, one beside its NPU variant class, and a plain one
BACKEND_CLASSES = '''import torch


class Runner(torch.nn.Module):
    def cuda(self):
        return torch.cuda.synchronize()

    def npu(self):
        return self

    def step(self, x):
        return x.cuda()


class CudaGraphRunner:
    def run(self, x):
        torch.cuda.synchronize()
        return x.cuda()


class NpuGraphRunner:
    def run(self, x):
        return x


class Plain:
    def go(self, x):
        return x.cuda()
'''


def test_an_edit_of_a_member_of_a_class_of_device_methods_rewalks_it_alone_unless_it_is_one(monkeypatch) -> None:
    """A member that is no device method is walked alone, with the reason its class gives every member (a class
    beside its NPU variant); an edit of a device method, or one that names a member for a device, walks the
    class; either way the findings are the full analysis's, also for a class the edit moved."""
    settings = Settings()
    lines = BACKEND_CLASSES.splitlines(keepends=True)
    base = analyze(BACKEND_CLASSES, settings)
    statements: list[int] = []
    walk_statement = analyzer._statement
    monkeypatch.setattr(analyzer, "_statement", lambda *a, **k: statements.append(1) or walk_statement(*a, **k))
    cases = [
        (lines.index("        return x.cuda()\n"), ["        return x.cuda().cuda()\n"], 1),  # Runner.step
        (lines.index("        torch.cuda.synchronize()\n"), ["        torch.cuda.synchronize()  # 改\n"], 1),
        (lines.index("    def npu(self):\n"), ["    def tpu(self):\n"], None),  # a device method
        (lines.index("        return x.cuda()\n"), ["        return x.cuda()\n", "    def to(self, d):\n"], None),
    ]
    for at, new, walked in cases:
        changed = "".join(apply(lines, at, at, new))
        statements.clear()
        incremental = analyze(changed, settings, previous=base, edit=TextEdit(at, at, len(new) - 1))
        assert (len(statements) == 1) == (walked == 1), (new, len(statements))  # the member, or the class's
        assert snapshot(incremental) == snapshot(analyze(changed, settings)), new
    # an edit above moves the classes, which keep what they say of their members: one inside a method of the moved
    # class beside its NPU variant is walked alone, with the class's reason
    moved = [*lines[:2], "x = 1\n", *lines[2:]]
    first = analyze("".join(moved), settings, previous=base, edit=TextEdit(2, 1, 1))
    assert snapshot(first) == snapshot(analyze("".join(moved), settings))
    at = moved.index("        torch.cuda.synchronize()\n")
    again = apply(moved, at, at, ["        torch.cuda.synchronize()  # 改\n"])
    statements.clear()
    second = analyze("".join(again), settings, previous=first, edit=TextEdit(at, at, 0))
    assert len(statements) == 1
    assert snapshot(second) == snapshot(analyze("".join(again), settings))


def test_random_edits_of_classes_of_device_methods_match_full_analysis() -> None:
    rng = random.Random(11)
    settings = Settings()
    original = BACKEND_CLASSES.splitlines(keepends=True)
    base = analyze(BACKEND_CLASSES, settings)
    pool = [line for line in original if line.strip()] + ["    def cuda(self):\n", "    def to(self, d):\n",
                                                          "    def forward_npu(self, x):\n", "return x.npu()\n",
                                                          "y = x.cuda()\n", "\n", "class NpuRunner:\n"]
    for _ in range(150):
        first = rng.randrange(len(original))
        last = min(len(original) - 1, first + rng.randrange(2))
        indent = original[first][: len(original[first]) - len(original[first].lstrip())].rstrip("\n")
        new = [(indent + rng.choice(pool).lstrip()).rstrip("\n") + "\n" for _ in range(rng.randrange(0, 3))]
        text = "".join(apply(original, first, last, new))
        incremental = analyze(text, settings, previous=base, edit=TextEdit(first, last, len(new) - (last - first + 1)))
        assert snapshot(incremental) == snapshot(analyze(text, settings)), (first, last, new)
