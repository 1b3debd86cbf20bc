"""The calls a project makes of its functions whose parameters default to CUDA (call_sites.py,
ProjectContext.calls), read from real files: which uses of a name leave a default unknown, the
severity NPU101 gives a default every call passes, and what a result cache keys on."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_lsp.analysis import analyze
from ascend_lsp.cli.cache import settings_key
from ascend_lsp.engine.analyzer import TextEdit
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.project import ProjectContext

HELPERS = '''import torch


def load(data, batch, device=torch.device("cuda")):
    return data


def ready(model, *, device="cuda:0"):
    return model


class Runner:
    def __init__(self, model, device=torch.device("cuda")):
        self.model = model

    def step(self, x, device=torch.device("cuda")):
        return x


class Outer:
    class Inner:
        def __init__(self, device=torch.device("cuda")):
            self.device = device
'''


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    return path


def passed(root: Path, function: str, parameter: str, line: int) -> tuple | None:
    return ProjectContext(str(root)).calls.passed(str(root / "helpers.py"), function, parameter, line)


# (a caller's text, the 0-based lines of its calls when they count as passing `load`'s device, else None)
LOAD_CALLS = [
    ("load(d, 8, device=dev)\n", [0]),
    ("from helpers import load\nload(d, 8, dev)\n", [1]),
    ("import helpers\nhelpers.load(\n    d,\n    8,\n    dev,\n)\nhelpers.load(d, 8, dev)\n", [1, 6]),
    ("load(d, 8, dev, *rest)\n", [0]),  # the device comes before the `*rest`
    ("load(d, 8, device=dev, **options)\n", [0]),
    ("# load(d, 8) in a comment\nload(d, 8, dev)\n", [1]),
    ("load(d, 8)\n", None),  # the default is used
    ("load(d, *rest)\n", None),  # `*rest` may or may not hold it
    ("load(d, 8, **options)\n", None),
    ("from helpers import load as fetch\nfetch(d, 8, dev)\n", None),  # calls of `fetch` are not read
    ("loaders = map(load, items)\n", None),  # a value: called elsewhere
    ("from helpers import (\n    load,\n)\nfrom os import (\n    path,\n)\nloaders = map(load, items)\n", None),
    ('f = getattr(helpers, "load")\n', None),
    ("load(d, 8, device=dev)\nload = cached(load)\n", None),
    ("load(d, 8, device=(dev\n", None),  # the arguments do not parse
    ("", None),  # no call: what the library's users get
]


@pytest.mark.parametrize(("caller", "lines"), LOAD_CALLS)
def test_which_uses_pass_a_default(tmp_path: Path, caller: str, lines: list[int] | None) -> None:
    write(tmp_path / "helpers.py", HELPERS)
    write(tmp_path / "scripts" / "train.py", caller)
    expected = ("load", tuple(("scripts/train.py", line) for line in lines)) if lines is not None else None
    assert passed(tmp_path, "load", "device", 3) == expected


# (a caller's text, the first call that leaves `load`'s device to its default, where every use is read)
OMITTING = [
    ("load(d, 8)\n", ("scripts/train.py", 0)),
    ("load(d, 8, device=dev)\nload(\n    d,\n    8,\n)\n", ("scripts/train.py", 1)),
    ("load(d, *rest)\n", None),  # `*rest` may hold it
    ("load(d, 8, **options)\n", None),
    ("loaders = map(load, items)\nload(d, 8)\n", None),  # a value: not every use is read
    ("load(d, 8, dev)\n", None),  # passed
    ('raise ValueError("use load(d) to read")\n', None),  # in a string
    ('def f():\n    """Call load(d) first."""\n', None),
    ("", None),  # no call
]


@pytest.mark.parametrize(("caller", "call"), OMITTING)
def test_which_call_leaves_a_default(tmp_path: Path, caller: str, call: tuple[str, int] | None) -> None:
    write(tmp_path / "helpers.py", HELPERS)
    write(tmp_path / "scripts" / "train.py", caller)
    omitted = ProjectContext(str(tmp_path)).calls.omitted(str(tmp_path / "helpers.py"), "load", "device", 3)
    assert omitted == (("load", call) if call is not None else None)


def test_a_file_calls_its_own_function_of_the_name(tmp_path: Path) -> None:
    write(tmp_path / "helpers.py", HELPERS)
    write(tmp_path / "run.py", "load(d, 8, dev)\n")
    write(tmp_path / "other.py", "def load(path):\n    return path\n\n\nload(p)\nhelpers.load(d, 8)\n")
    assert passed(tmp_path, "load", "device", 3) is None  # `helpers.load(d, 8)` may be this one
    write(tmp_path / "other.py", "def load(path):\n    return path\n\n\nload(p)\n")
    assert passed(tmp_path, "load", "device", 3) == ("load", (("run.py", 0),))


def test_keyword_only_classes_and_methods(tmp_path: Path) -> None:
    write(tmp_path / "helpers.py", HELPERS)
    write(tmp_path / "run.py", "ready(m, device=d)\nready(m, d)\nRunner(m, d)\nRunner(m, device=d).step(x, d)\n"
                               "Inner(device=d)\n")
    assert passed(tmp_path, "ready", "device", 7) is None  # keyword-only: a position does not pass it
    write(tmp_path / "run.py", "ready(m, device=d)\nRunner(m, d)\nRunner(m, device=d).step(x, d)\nInner(device=d)\n")
    assert passed(tmp_path, "ready", "device", 7) == ("ready", (("run.py", 0),))
    assert passed(tmp_path, "__init__", "device", 12) == ("Runner", (("run.py", 1), ("run.py", 2)))
    assert passed(tmp_path, "step", "device", 15) is None  # a method: its receivers are not followed
    assert passed(tmp_path, "__init__", "device", 21) is None  # a nested class's


def test_a_subclass_leaves_the_class_unknown(tmp_path: Path) -> None:
    write(tmp_path / "helpers.py", HELPERS)
    write(tmp_path / "run.py", "Runner(m, d)\n\n\nclass Fast(Runner):\n    pass\n")
    assert passed(tmp_path, "__init__", "device", 12) is None


@pytest.mark.parametrize("made", ["cls(model)", "self.__class__(model)", "type(self)(model)"])
def test_a_class_that_makes_itself_unnamed_is_unknown(tmp_path: Path, made: str) -> None:
    write(tmp_path / "helpers.py", HELPERS.replace("        return x\n", f"        return {made}\n", 1))
    write(tmp_path / "run.py", "Runner(m, d)\n")
    assert passed(tmp_path, "__init__", "device", 12) is None
    write(tmp_path / "helpers.py", HELPERS)
    assert passed(tmp_path, "__init__", "device", 12) == ("Runner", (("run.py", 0),))


def test_lines_break_as_the_engine_breaks_them(tmp_path: Path) -> None:
    write(tmp_path / "helpers.py", HELPERS.replace("\n", "\r\n"))
    write(tmp_path / "run.py", "x = 1\rload(d, 8, dev)\r")
    assert passed(tmp_path, "load", "device", 3) == ("load", (("run.py", 1),))


def test_npu101_lowers_a_default_every_call_passes(tmp_path: Path) -> None:
    helpers = write(tmp_path / "helpers.py", HELPERS)
    write(tmp_path / "run.py", "load(d, 8, dev)\n")
    project = ProjectContext(str(tmp_path))
    settings = Settings(select=("NPU101",))
    findings = analyze(HELPERS, settings, str(helpers), project=project).findings
    severities = {f.range.start_line: f.severity for f in findings}
    # `Runner(...)`'s, `step`'s and `Inner`'s: no call, a method, a nested class
    assert severities == {3: Severity.INFO, 7: Severity.INFO, 12: Severity.WARNING, 15: Severity.WARNING,
                          21: Severity.WARNING}
    lowered = next(f for f in findings if f.range.start_line == 3)
    assert lowered.message.endswith(" (A default no call in the project uses: every call of `load` passes "
                                    "`device`: 1 call, run.py:1.)")
    assert [(r.path, r.range.start_line, r.message) for r in lowered.related] == \
        [(str(tmp_path / "run.py"), 0, "passes `device`")]
    ready = next(f for f in findings if f.range.start_line == 7)  # a plain default: info, for the default alone
    assert ready.message.endswith("a caller that passes its device is unaffected.)") and not ready.related


def test_npu101_warns_of_a_default_a_call_leaves(tmp_path: Path) -> None:
    helpers = write(tmp_path / "helpers.py", HELPERS)
    write(tmp_path / "run.py", "load(d, 8, dev)\nready(m)\n")
    findings = analyze(HELPERS, Settings(select=("NPU101",)), str(helpers), project=ProjectContext(str(tmp_path))).findings
    ready = next(f for f in findings if f.range.start_line == 7)  # a plain default a call uses: the warning
    assert ready.severity == Severity.WARNING
    assert ready.message.endswith(" (A default the project uses: a call of `ready` (run.py:2) passes no `device`, so "
                                  "it gets `cuda:0`: on an NPU host pass one there, or change the default.)")
    assert [(r.path, r.range.start_line, r.message) for r in ready.related] == \
        [(str(tmp_path / "run.py"), 1, "calls `ready` without `device`")]


def test_the_cache_key_and_the_server_follow_the_calls(tmp_path: Path) -> None:
    write(tmp_path / "helpers.py", HELPERS)
    run = write(tmp_path / "run.py", "load(d, 8, dev)\n")
    project = ProjectContext(str(tmp_path))
    settings = Settings()
    key = settings_key(settings, project)
    assert not project.reread_python()  # read, and unchanged
    assert settings_key(settings, project) == key
    write(run, "load(d, 8)\n")
    assert project.reread_python()
    assert project.calls.passed(str(tmp_path / "helpers.py"), "load", "device", 3) is None
    assert settings_key(settings, ProjectContext(str(tmp_path))) != key


MEMORY = '''import torch


def peak():
    return torch.cuda.max_memory_allocated()
'''


@pytest.mark.parametrize(("caller", "severity"), [
    ("if torch.cuda.is_available():\n    print(peak())\n", Severity.INFO),
    ("x = peak() if use_cuda else 0\n", Severity.INFO),
    ("if torch.cuda.is_available() and verbose:\n    print(peak())\n", Severity.INFO),
    ("def log():\n    if not torch.cuda.is_available():\n        return\n    print(peak())\n", Severity.INFO),
    ("if torch.cuda.is_available():\n    print(peak())\nprint(peak())\n", Severity.WARNING),
    ("if use_gpu:\n    print(peak())\n", Severity.WARNING),  # a test of no backend
    ("if torch.cuda.is_available():\n    print(peak(\n", Severity.WARNING),  # the statement does not parse
    ("if torch.cuda.is_available():\n    print(peak())\nsetattr(mod, 'peak', None)\n", Severity.WARNING),
    # a test's doubles replace it: not a call, nor a use (the call above is the one to follow)
    ("if torch.cuda.is_available():\n    print(peak())\nmonkeypatch.setattr(mod, 'peak', fake)\n"
     "with mock.patch('memory.peak', return_value=0), patch.object(mod, \"peak\"):\n    pass\n", Severity.INFO),
    ("if torch.cuda.is_available():\n    print(peak())\nmonkeypatch.setattr(mod, 'peak', peak)\n", Severity.WARNING),
])
def test_npu103_follows_the_tests_every_call_is_under(tmp_path: Path, caller: str, severity: Severity) -> None:
    memory = write(tmp_path / "memory.py", MEMORY)
    write(tmp_path / "run.py", caller)
    findings = analyze(MEMORY, Settings(select=("NPU103",)), str(memory), project=ProjectContext(str(tmp_path))).findings
    assert [(f.range.start_line, f.severity) for f in findings] == [(4, severity)]
    if severity == Severity.INFO:
        line = caller[:caller.index("peak(")].count("\n") + 1
        assert findings[0].message.endswith(f" (Every call of `peak` in the project runs only where a test found CUDA "
                                            f"(1 call, run.py:{line}): on an NPU host it runs once those tests are "
                                            f"changed, if ever, and then this needs the change too.)")
        assert findings[0].related[0].path == str(tmp_path / "run.py")


STATES = '''import torch


class CudaState:
    saved = torch.cuda.is_available()

    def __init__(self, index):
        self.index = index

    def get(self):
        return torch.cuda.get_rng_state(self.index)
'''


@pytest.mark.parametrize(("caller", "severity"), [
    ("if torch.cuda.is_available():\n    states = [CudaState(i) for i in range(2)]\n", Severity.INFO),
    ("def restore(key):\n    if key != 'default':\n        if not torch.cuda.is_available():\n            return\n"
     "        return CudaState(0)\n", Severity.INFO),
    ("if torch.cuda.is_available():\n    state = CudaState(0)\nstate = CudaState(1)\n", Severity.WARNING),
    ("__all__ = ['CudaState']\nif torch.cuda.is_available():\n    state = CudaState(0)\n", Severity.WARNING),
    ("class Mine(CudaState):\n    pass\nif torch.cuda.is_available():\n    state = CudaState(0)\n", Severity.WARNING),
    ("if torch.cuda.is_available():\n    state = CudaState(0)\nCudaState.get(state)\n", Severity.WARNING),
])
def test_a_class_made_only_under_cuda_tests_runs_its_methods_there(tmp_path: Path, caller: str,
                                                                 severity: Severity) -> None:
    states = write(tmp_path / "states.py", STATES)
    write(tmp_path / "run.py", caller)
    project = ProjectContext(str(tmp_path))
    findings = analyze(STATES, Settings(select=("NPU103",)), str(states), project=project).findings
    # the class body runs at import, wherever the class is made: its finding keeps its severity
    assert [(f.range.start_line, f.severity) for f in findings] == [(4, Severity.WARNING), (10, severity)]
    if severity == Severity.INFO:
        assert "(Every call of `CudaState` in the project runs only where a test found CUDA (1 call, run.py:" \
            in findings[1].message
        assert [r.path for r in findings[1].related] == [str(tmp_path / "run.py")]
    # an edit inside the method re-walks it alone, with what the calls of its class say
    edited = STATES.replace("self.index)", "self.index) or None")
    again = analyze(edited, Settings(select=("NPU103",)), str(states), project=project,
                    previous=analyze(STATES, Settings(select=("NPU103",)), str(states), project=project),
                    edit=TextEdit(10, 10, 0))
    full = analyze(edited, Settings(select=("NPU103",)), str(states), project=project)
    assert again.walked < full.walked
    assert [(f.range, f.message, f.severity, f.related) for f in again.findings] == \
        [(f.range, f.message, f.severity, f.related) for f in full.findings]
