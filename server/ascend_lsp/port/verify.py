"""`lsp-check port SRC.py -o OUT.py --verify "Build()" --input randn:2,3,32,32`: the port checked
against its source in one command.

The model `Build()` makes in SRC.py runs in eval mode on the inputs (seeded), with torch's
random initial weights; those weights are converted (convert_weights.py) into OUT.ckpt beside
the port, loaded strictly into the model the same expression makes in the port, which runs on
the same inputs; the outputs are graded with msprobe's thresholds. The report says the last
stage reached (STAGES) and why it stopped there. On a verdict other than PASS the runner's layer
comparison (`lsp-check run --target mindspore --layers`) names the first diverging layer.

Both files are run (they are the user's model, as `lsp-check run` runs it), and the expression
is the user's own: this runs in the `lsp-check` process, never in the language server, and
imports torch and mindspore only here.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# How far a port gets, in order: made; imports; builds the model; loads the converted weights
# strictly; runs; matches torch within msprobe's thresholds.
STAGES = ("ported", "imports", "builds", "loads", "runs", "PASS")
INPUT_FORMS = "randn:D1,D2,... (float32 normal) or randint:HIGH:D1,D2,... (int64 in [0, HIGH))"


@dataclass
class Verification:
    stage: str
    reason: str = ""  # why it stopped there ("" at PASS)
    outputs: list[dict] = field(default_factory=list)  # per output: path, verdict, reason, metrics
    weights: dict = field(default_factory=dict)  # convert-weights' report
    checkpoint: str = ""
    first_divergence: dict | None = None  # the runner's layer comparison, when it ran

    def to_dict(self) -> dict:
        return {"stage": self.stage, "reason": self.reason, "outputs": self.outputs, "weights": self.weights,
                "checkpoint": self.checkpoint, "first_divergence": self.first_divergence}


def parse_input(text: str) -> Callable:
    """An --input: a function of a numpy random generator that draws the array."""
    kind, _, rest = text.partition(":")
    high, _, dims = rest.partition(":") if kind == "randint" else ("", "", rest)
    try:
        shape = tuple(int(d) for d in dims.split(","))
        bound = int(high) if kind == "randint" else 0
    except ValueError:
        raise ValueError(f"--input {text!r}: expected {INPUT_FORMS}") from None
    if kind == "randn" and all(d > 0 for d in shape):
        return lambda rng: rng.standard_normal(shape).astype("float32")
    if kind == "randint" and bound > 0 and all(d > 0 for d in shape):
        return lambda rng: rng.integers(0, bound, shape).astype("int64")
    raise ValueError(f"--input {text!r}: expected {INPUT_FORMS}")


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def torch_reference(torch, source: Path, build: str, arrays: list, prepare: Callable | None = None):
    """The torch model's output on `arrays` (eval mode, seeded, no gradients) and its state dict;
    a function of the inputs (no state) gives an empty one. `prepare(torch, model, args)` runs
    before eval mode (tests measure BatchNorm statistics there). A parameter or buffer the model leaves
    uninitialised (`nn.Parameter(torch.empty(n, d))` that nothing fills: Whisper's, which loads a
    checkpoint) gets a seeded normal draw (std 0.02): it would hold whatever memory held, NaN or garbage,
    and the reference would change from run to run."""
    torch.manual_seed(0)
    enabled, warn_only = torch.are_deterministic_algorithms_enabled(), \
        torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)  # torch.empty's memory filled with NaN
    try:
        model = eval(build, vars(load_module(source, f"torch_{source.stem}")))
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
    args = [torch.from_numpy(a) if hasattr(a, "dtype") else a for a in arrays]
    if not isinstance(model, torch.nn.Module):
        return model(*args), {}
    with torch.no_grad():
        for tensor in (*model.parameters(), *model.buffers()):
            if tensor.is_floating_point() and tensor.numel() and tensor.isnan().all():
                tensor.copy_(torch.randn(tensor.shape) * 0.02)
    if prepare:
        prepare(torch, model, args)
    model.eval()
    with torch.no_grad():
        return model(*args), model.state_dict()


def verify(torch, mindspore, source: Path, port: Path, build: str, arrays: list, checkpoint: Path,
           prepare: Callable | None = None) -> Verification:
    """Run the source and its port as the module docstring says; the stage reached and why."""
    from .convert_weights import convert_state, write_checkpoint

    reference, state = torch_reference(torch, source, build, arrays, prepare)
    result = Verification("ported")
    try:
        module = load_module(port, f"ms_{port.stem}")
        result.stage = "imports"
        net = eval(build, vars(module))
        result.stage = "builds"
        conversion = convert_state({k: v.numpy() for k, v in state.items()}, source.read_text(encoding="utf-8"))
        result.weights = conversion.to_dict()
        if conversion.tensors:
            write_checkpoint(conversion.tensors, str(checkpoint))
            result.checkpoint = str(checkpoint)
            not_loaded, unused = mindspore.load_param_into_net(net, mindspore.load_checkpoint(str(checkpoint)),
                                                               strict_load=True)
        else:  # nothing to load (MindSpore refuses an empty checkpoint): the port must hold nothing either
            not_loaded = [p.name for p in net.get_parameters()] if hasattr(net, "get_parameters") else []
            unused = []
        if conversion.unmapped or not_loaded or unused:
            result.reason = "; ".join(part for part in (
                _names("not mapped by convert-weights", [k for k, _ in conversion.unmapped]),
                _names("in the port, not loaded", list(not_loaded)),
                _names("in the checkpoint, not in the port", list(unused))) if part)
            return result
        result.stage = "loads"
        if hasattr(net, "set_train"):  # else a function of the inputs
            net.set_train(False)
        out = net(*[mindspore.Tensor(a) if hasattr(a, "dtype") else a for a in arrays])
        result.stage = "runs"
    except Exception as exc:  # noqa: BLE001 - whatever stops the port is the stage's reason
        result.reason = _reason(exc, port)
        return result
    verdict, result.outputs = grade(torch, reference, out)
    if verdict == "PASS":
        result.stage = "PASS"
    else:
        result.reason = "; ".join(f"{o['path']} {o['verdict']}: {o.get('reason', '')}" for o in result.outputs
                                  if o["verdict"] != "PASS")
    return result


def grade(torch, reference, candidate) -> tuple[str, list[dict]]:
    """The worst verdict over the outputs and one report per output, with the runner's comparison
    and msprobe's cascade. `reference` holds torch tensors, `candidate` MindSpore ones, nested alike."""
    from ..knowledge.thresholds import load_thresholds
    from ..runner.grading import grade_output, metric_parameters, worst
    from ..runner.worker.metrics import compare_values
    from ..runner.worker.tensor_values import flatten

    thresholds = load_thresholds()
    parameters = metric_parameters(thresholds)
    ref, cand = dict(flatten(torch, "out", reference)), dict(flatten(torch, "out", candidate))
    reports = []
    for path in sorted(set(ref) | set(cand)):
        if path not in cand or path not in ref:
            reports.append({"path": path, "verdict": "ERROR", "reason": "missing on one side"})
            continue
        report = compare_values(torch, path, ref[path], cand[path], parameters, False)
        verdict = grade_output(report, thresholds)
        reports.append({"path": path, "verdict": verdict.verdict, "reason": verdict.reason,
                        "metrics": report.get("metrics", {})})
    return worst(r["verdict"] for r in reports), reports


def first_divergence(source: Path, port: Path, build: str, inputs: list[str]) -> dict | None:
    """The runner's layer comparison of the model on these inputs: the first layer of the port whose
    output diverges while its inputs do not (None when none does or the comparison cannot run)."""
    from ..runner.job import Job
    from ..runner.pool import RunnerPool

    function = "_lsp_check_port_verify"
    draws = ", ".join(_draw(text) for text in inputs)
    driver = (f"\n\ndef {function}():\n    import numpy\n    rng = numpy.random.default_rng(0)\n"
              f"    model = {build}\n    {{}}\n    return model(*[{{}}(a) for a in [{draws}]])\n")
    source_text = source.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="lsp-check-verify-") as private:
        paired = Path(private) / port.name
        paired.write_text(port.read_text(encoding="utf-8") + driver.format("model.set_train(False)",
                                                                          "mindspore.Tensor"), encoding="utf-8")
        job = Job(path=str(source), text=source_text + driver.format("model.eval()", "torch.from_numpy"),
                  function=function, target="mindspore", mindspore_port=str(paired), layers="module",
                  cwd=os.path.dirname(os.path.abspath(source)))
        with RunnerPool() as pool:
            run = pool.run(job)
    return run.to_dict().get("first_divergence")


def _draw(text: str) -> str:
    kind, _, rest = text.partition(":")
    if kind == "randint":
        high, _, dims = rest.partition(":")
        return f"rng.integers(0, {int(high)}, ({dims},)).astype('int64')"
    return f"rng.standard_normal(({rest},)).astype('float32')"


def _names(what: str, names: list[str]) -> str:
    return f"{len(names)} {what} ({', '.join(names[:3])}{', …' if len(names) > 3 else ''})" if names else ""


def _reason(exc: BaseException, port: Path) -> str:
    """The exception, and the line of the port it came from (else its last frame)."""
    frames = traceback.extract_tb(exc.__traceback__)
    frame = next((f for f in reversed(frames) if f.filename == str(port)), frames[-1] if frames else None)
    where = f" ({Path(frame.filename).name}:{frame.lineno}: {(frame.line or '').strip()[:100]})" if frame else ""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}{where}"
