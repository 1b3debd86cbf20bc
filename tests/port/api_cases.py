"""The executed equivalence tests of the port's API table (mappings/mindspore/port-api.toml).

Each row's example call is written in several calling styles, as PaConvert tests each API:
positional, keyword, torch's defaults omitted, and each other name of the callable (the tensor
method `x.sum(...)` beside `torch.sum(x, ...)`, `F.x` beside `torch.nn.functional.x`, `nn.X`
beside `torch.nn.X`). All cases go into one file, ported once by `lsp-check port`'s rewrite; the
torch file runs in one process, its port on MindSpore's CPU in another, on the same random
inputs; the outputs are compared here (shapes, dtypes, values with float tolerances; a random
draw by shape and dtype). A row is proven when every case of it ported completely and agreed.

    python -m tests.port.api_cases --record   # run every row, write mappings/build/port_api_proofs.toml

The same module is each side's driver: `python tests/port/api_cases.py torch|mindspore DIR`.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import pickle
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "mappings" / "mindspore" / "port-api.toml"
PROOFS = ROOT / "mappings" / "build" / "port_api_proofs.toml"
HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
# the input makers an example may call; each becomes one input array of the case
MAKERS = ("randn", "rand", "randpos", "randint", "randbool", "tensor")


@dataclass
class Case:
    row: str
    style: str  # which calling style: positional, keyword, defaults, the alias or method name
    call: str  # the case's body: the call, as written in torch code
    inputs: list = field(default_factory=list)  # numpy arrays, the case function's a0, a1, …
    random: bool = False


def load_rows() -> list[dict]:
    with TABLE.open("rb") as f:
        return tomllib.load(f)["api"]


def _make(call: ast.Call, rng: numpy.random.Generator) -> numpy.ndarray:
    """An input array: randn(2, 3), rand(4), randpos(3) (in [0.5, 2)), randint(0, 5, (2, 3)),
    randbool(2, 3), tensor([1, 2]); a `dtype='float16'` keyword casts it."""
    name = call.func.id  # type: ignore[attr-defined]
    # the table's own text, literals and float('nan') / float('inf')
    args = [eval(compile(ast.Expression(a), "<example>", "eval"), {"__builtins__": {}, "float": float})
            for a in call.args]
    dtype = {k.arg: ast.literal_eval(k.value) for k in call.keywords}.get("dtype")
    if name == "randn":
        array = rng.standard_normal(args).astype("float32")
    elif name == "rand":
        array = rng.random(args).astype("float32")
    elif name == "randpos":
        array = rng.uniform(0.5, 2.0, args).astype("float32")
    elif name == "randint":
        array = rng.integers(args[0], args[1], args[2]).astype("int64")
    elif name == "randbool":
        array = rng.random(args) < 0.5
    else:
        array = numpy.array(args[0])
    return array.astype(dtype) if dtype else array


def cases(row: dict, index: int) -> list[Case]:
    """The row's calls in every calling style, with their inputs."""
    from ascend_lsp.port.api_table import signature

    rng = numpy.random.default_rng(index)
    examples = row["example"] if isinstance(row["example"], list) else [row["example"]]
    found: list[Case] = []
    for number, text in enumerate(examples):
        inputs: list[numpy.ndarray] = []
        example = _arguments(text, rng, inputs)
        forward = ast.unparse(_arguments(row["input"], rng, inputs)).removeprefix("f") if "input" in row else ""
        label = f"#{number + 1} " if len(examples) > 1 else ""
        found += _styles(row, signature(row["params"]), example, forward, inputs, label)
    return found


def _arguments(text: str, rng: numpy.random.Generator, inputs: list) -> ast.Call:
    """`f(<text>)` with each input maker replaced by the name of the array it made (a0, a1, …)."""
    call = ast.parse(f"f({text})", mode="eval").body
    assert isinstance(call, ast.Call)
    for node in ast.walk(call):
        for name, value in ast.iter_fields(node):
            for i, child in enumerate(value if isinstance(value, list) else [value]):
                if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in MAKERS:
                    inputs.append(_make(child, rng))
                    if isinstance(value, list):
                        value[i] = ast.Name(f"a{len(inputs) - 1}")
                    else:
                        setattr(node, name, ast.Name(f"a{len(inputs) - 1}"))
    return call


def _styles(row: dict, sig, example: ast.Call, forward: str, inputs: list, label: str) -> list[Case]:
    given = dict(zip(sig.positional, (ast.unparse(a) for a in example.args)))
    extra = [ast.unparse(a) for a in example.args[len(sig.positional):]]
    given |= {k.arg: ast.unparse(k.value) for k in example.keywords}

    def positional(skip_first: bool) -> list[str]:
        names = list(sig.positional[1 if skip_first else 0:])
        last = max((i for i, n in enumerate(names) if n in given), default=-1)
        out = [given.get(n, sig.defaults.get(n, "None")) for n in names[:last + 1]] + extra
        return out + [f"{n}={given[n]}" for n in sig.keyword_only if n in given]

    def keyword(skip_first: bool) -> list[str]:
        names = list(sig.positional[1 if skip_first else 0:])
        first = 0 if skip_first else 1  # the first parameter stays positional, and those before a `/`
        keep = max(first, len([n for n in names if n in sig.positional_only]))
        head = [given[n] for n in names[:keep] if n in given]
        rest = names[len(head):] if not extra else []
        if extra:  # a *args parameter: what precedes it stays positional
            head = [given[n] for n in names if n in given] + extra
        return head + [f"{n}={given[n]}" for n in (*rest, *sig.keyword_only) if n in given]

    def defaults(skip_first: bool) -> list[str]:
        names = sig.positional[1 if skip_first else 0:]
        return [given[n] for n in names if n not in sig.defaults and n in given] + extra

    found: list[Case] = []
    for name in (row["torch"], *row.get("also", ())):
        method = name.startswith("torch.Tensor.")
        styles = {"positional": positional, "keyword": keyword, "defaults": defaults}
        if name != row["torch"]:  # another name of the callable: one style of it is enough
            styles = {"keyword": keyword}
        for style, render in styles.items():
            args = ", ".join(render(method))
            if method:
                receiver = given[sig.positional[0]]
                if not isinstance(ast.parse(receiver, mode="eval").body, (ast.Name, ast.Call, ast.Attribute)):
                    receiver = f"({receiver})"
                call = f"{receiver}.{name.rsplit('.', 1)[1]}({args})"
            else:
                callee = _callee(name, style)
                call = f"{callee}({args}){forward}"
            body = f"    return {call}\n"
            if method and name.endswith("_"):  # in place: the receiver is what changed
                body = f"    {call}\n    return {receiver}\n"
            style_name = label + (style if name == row["torch"] else name)
            if all(c.call != body for c in found):
                found.append(Case(row["torch"], style_name, body, inputs, bool(row.get("random"))))
    return found


def _callee(name: str, style: str) -> str:
    """How a file names the torch API: F.x and nn.X in some styles, the full name in the others."""
    if name.startswith("torch.nn.functional.") and style != "positional":
        return "F." + name.removeprefix("torch.nn.functional.")
    if name.startswith("torch.nn.") and style == "keyword":
        return "nn." + name.removeprefix("torch.nn.")
    return name


def module_text(all_cases: list[Case]) -> tuple[str, list[tuple[int, int]]]:
    """One file of all cases (`case_<n>(a0, a1, …)`), and each case's line range."""
    lines = HEADER.splitlines()
    spans = []
    for n, case in enumerate(all_cases):
        params = ", ".join(f"a{i}" for i in range(len(case.inputs)))
        lines += ["", "", f"def case_{n}({params}):"]
        start = len(lines) + 1
        lines += case.call.rstrip("\n").split("\n")
        spans.append((start, len(lines)))
    return "\n".join(lines) + "\n", spans


def run_side(side: str, folder: Path, count: int) -> list:
    """Every case's output on one side; a case that ends the process is recorded as its failure
    and the rest run in a new process."""
    results: list = []
    while len(results) < count:
        out = folder / f"{side}.out"
        out.unlink(missing_ok=True)
        process = subprocess.run([sys.executable, __file__, side, str(folder), str(len(results))],
                                 capture_output=True, text=True, timeout=1200, env={**os.environ})
        done = []
        if out.exists():
            with out.open("rb") as f:
                while True:
                    try:
                        done.append(pickle.load(f))
                    except EOFError:
                        break
        results += done
        if len(results) < count and process.returncode != 0:
            tail = (process.stderr.strip().splitlines() or ["no message"])[-1]
            results.append(("error", f"the process ended ({process.returncode}): {tail}"))
    return results


def _driver(side: str, folder: Path, start: int) -> None:
    with (folder / "cases.pkl").open("rb") as f:
        all_inputs = pickle.load(f)
    if side == "torch":
        import torch

        convert = torch.tensor
        module_file = folder / "cases_torch.py"
    else:
        import mindspore

        mindspore.set_context(mode=mindspore.PYNATIVE_MODE, device_target="CPU")
        convert = mindspore.Tensor
        module_file = folder / "cases_mindspore.py"
    refused: set[int] = set()
    if side == "mindspore":
        with (folder / "refused.pkl").open("rb") as f:
            refused = pickle.load(f)
    namespace: dict = {"__name__": f"cases_{side}"}
    exec(compile(module_file.read_text(encoding="utf-8"), str(module_file), "exec"), namespace)
    with (folder / f"{side}.out").open("ab") as out:
        repeated = None  # the last kernel failure's message: MindSpore may raise it again at the next launches
        for n in range(start, len(all_inputs)):
            if n in refused:
                pickle.dump(("error", "not run: torch refuses it"), out)
                continue
            for _attempt in range(3):
                try:
                    value = ("ok", _plain(namespace[f"case_{n}"](*(convert(a.copy()) for a in all_inputs[n]))))
                    break
                except Exception as exc:  # noqa: BLE001 - a failing case is a result
                    text = str(exc).strip()
                    value = ("error", f"{type(exc).__name__}: {text.splitlines()[0][:300] if text else ''}")
                    if value[1] != repeated:
                        break
            repeated = value[1] if value[0] == "error" and value[1].startswith("RuntimeError") else None
            pickle.dump(value, out)
            out.flush()


def _plain(value: object) -> object:
    """A side's output as numpy arrays, Python numbers, strings and lists."""
    if str(getattr(value, "dtype", "")).lower() in ("torch.bfloat16", "bfloat16"):  # numpy has none
        return ["dtype:bfloat16", _plain(value.float())]  # type: ignore[attr-defined]
    if hasattr(value, "asnumpy"):  # a MindSpore tensor
        return value.asnumpy()
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        return value.detach().numpy()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    text = str(value)  # a dtype: torch.float32, Float32
    return "dtype:" + text.removeprefix("torch.").lower().rstrip("_")


def agree(expected: object, got: object, random: bool) -> str | None:
    """Why the port's output differs from torch's, or None."""
    if isinstance(expected, numpy.ndarray) or isinstance(got, numpy.ndarray):
        if not (isinstance(expected, numpy.ndarray) and isinstance(got, numpy.ndarray)):
            return f"torch gave {type(expected).__name__}, the port {type(got).__name__}"
        if expected.shape != got.shape or expected.dtype != got.dtype:
            return f"torch gave {expected.dtype}{list(expected.shape)}, the port {got.dtype}{list(got.shape)}"
        if random or expected.dtype.kind not in "fc":
            return None if random or numpy.array_equal(expected, got) else "values differ"
        tolerance = 1e-3 if expected.dtype == numpy.float16 else 1e-5
        close = numpy.allclose(got, expected, rtol=tolerance * 10, atol=tolerance, equal_nan=True)
        return None if close else f"values differ (max abs {numpy.nanmax(numpy.abs(got - expected)):.3g})"
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return f"torch gave {len(expected)} values, the port {len(got)}"
        return next((why for e, g in zip(expected, got) if (why := agree(e, g, random))), None)
    if type(expected) is not type(got):
        return f"torch gave {expected!r}, the port {got!r}"
    if isinstance(expected, float):
        return None if random or numpy.isclose(expected, got, rtol=1e-4, atol=1e-5) else f"{expected} != {got}"
    return None if expected == got else f"torch gave {expected!r}, the port {got!r}"


def verdicts(folder: Path, rows: list[dict] | None = None) -> dict[str, str | None]:
    """Every row's verdict: None when all its cases ported and agreed, else the first reason."""
    from ascend_lsp.knowledge.port_api import PortApi, load_port_api
    from ascend_lsp.port.rewrite import port

    rows = load_rows() if rows is None else rows
    table = load_port_api()
    candidates = {name: dataclasses.replace(row, proven=True) for name, row in table.by_name.items()}
    all_cases = [case for index, row in enumerate(rows) for case in cases(row, index)]
    text, spans = module_text(all_cases)
    (folder / "cases_torch.py").write_text(text, encoding="utf-8")
    # the port itself, with every row taken as proven: the runs below decide
    result = port(text, str(folder / "cases_torch.py"), PortApi(table.rows, candidates))
    (folder / "cases_mindspore.py").write_text(result.text, encoding="utf-8")
    with (folder / "cases.pkl").open("wb") as f:
        pickle.dump([case.inputs for case in all_cases], f)
    left = {}
    for item in result.items:
        if item.status != "converted":
            for n, (start, end) in enumerate(spans):
                if start <= item.line <= end:
                    left.setdefault(n, f"the port left it to a person: {item.what}")
    expected = run_side("torch", folder, len(all_cases))
    # a call torch refuses is not run on MindSpore either (an error there can leave state behind
    # that fails the next calls of the same operator)
    with (folder / "refused.pkl").open("wb") as f:
        pickle.dump({n for n, value in enumerate(expected) if value[0] == "error"}, f)
    got = run_side("mindspore", folder, len(all_cases))
    found: dict[str, str | None] = {row["torch"]: None for row in rows}
    for n, case in enumerate(all_cases):
        if found[case.row] is not None:
            continue
        why = left.get(n)
        if expected[n][0] == "error" and case.style.endswith("defaults"):
            continue  # torch has no such call without the optional arguments: nothing to port
        if why is None and expected[n][0] == "error":
            why = f"torch refuses the example: {expected[n][1]}"
        if why is None and got[n][0] == "error":
            why = f"fails on MindSpore's CPU: {got[n][1]}"
        if why is None:
            why = agree(expected[n][1], got[n][1], case.random)
        if why is not None:
            found[case.row] = f"{case.style} style `{case.call.strip().splitlines()[0].removeprefix('return ')}`: {why}"
    return found


def record(folder: Path) -> None:
    from importlib.metadata import version

    found = verdicts(folder)
    passed = sorted(name for name, why in found.items() if why is None)
    failed = {name: why for name, why in sorted(found.items()) if why is not None}

    def quoted(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["# Written by `python -m tests.port.api_cases --record`: the verdict of each row's executed",
             "# equivalence test (torch CPU against MindSpore CPU). Do not edit by hand.", "",
             "passed = [", *(f"    {quoted(n)}," for n in passed), "]", "", "[meta]",
             f"torch = {quoted(version('torch').split('+')[0])}", f"mindspore = {quoted(version('mindspore'))}",
             "", "[failed]",
             *(f"{quoted(n)} = {quoted(why)}" for n, why in failed.items())]
    PROOFS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(passed)} rows proven, {len(failed)} not: {PROOFS.relative_to(ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            record(Path(tmp))
    else:
        _driver(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]))
