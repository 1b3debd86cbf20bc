"""Run a torch model and its port on the same inputs and weights (tests and benchmark)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

from ascend_lsp.knowledge.thresholds import load_thresholds
from ascend_lsp.runner.grading import grade_output, metric_parameters, worst
from ascend_lsp.runner.worker.metrics import compare_values
from ascend_lsp.runner.worker.tensor_values import flatten


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def run_torch(torch, path: Path, build: str, arrays, hidden: str = "", batch_axis: int = 1):
    """The torch model (eval mode, seeded, BatchNorm statistics measured), its output on `arrays`,
    and its state dict."""
    torch.manual_seed(0)
    module = load_module(path, f"torch_{path.stem}")
    model = eval(build, vars(module))
    args = [_tensor(torch.from_numpy, a) for a in arrays]
    if not isinstance(model, torch.nn.Module):  # a function of the inputs
        return model(*args), {}
    if hidden:
        args.append(getattr(model, hidden)(args[0].shape[batch_axis]))
    measure_batchnorm(torch, model, args)
    model.eval()
    with torch.no_grad():
        out = model(*args)
    return out, model.state_dict()


def _tensor(make, value):
    """An input array as the framework's tensor; a plain value (a flag) as it is."""
    return make(value) if hasattr(value, "dtype") else value


def measure_batchnorm(torch, model, args) -> None:
    """BatchNorm's running statistics set to the inputs' (one pass in train mode, cumulative average),
    as training leaves them: with the initial ones (0 and 1) activations fade through a deep network
    in eval mode (MobileNetV2's logits would be ~1e-8), and moving_mean/moving_variance go untested."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    momenta = [m.momentum for m in norms]
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None
    model.train()
    with torch.no_grad():
        model(*args)
    for norm, momentum in zip(norms, momenta):
        norm.momentum = momentum


def run_mindspore(mindspore, path: Path, build: str, arrays, checkpoint: Path, hidden: str = "",
                  batch_axis: int = 1):
    """The port's output with the converted checkpoint loaded strictly; also what did not load."""
    net = eval(build, vars(load_module(path, f"ms_{path.stem}")))
    not_loaded, unused = load_strictly(mindspore, net, checkpoint)
    return run_net(mindspore, net, arrays, hidden, batch_axis), not_loaded, unused


def load_strictly(mindspore, net, checkpoint: Path) -> tuple[list[str], list[str]]:
    """Load the checkpoint with strict_load: the port's parameters it lacks, and its names the port lacks."""
    not_loaded, unused = mindspore.load_param_into_net(net, mindspore.load_checkpoint(str(checkpoint)),
                                                       strict_load=True)
    return list(not_loaded), list(unused)


def run_net(mindspore, net, arrays, hidden: str = "", batch_axis: int = 1):
    if hasattr(net, "set_train"):  # else a function of the inputs
        net.set_train(False)
    args = [_tensor(mindspore.Tensor, a) for a in arrays]
    if hidden:
        args.append(getattr(net, hidden)(args[0].shape[batch_axis]))
    return net(*args)


# How far a port gets, in order: made; imports; builds the model; loads the converted weights
# strictly; runs; matches torch within msprobe's thresholds.
STAGES = ("ported", "imports", "builds", "loads", "runs", "PASS")


def stage_reached(torch, mindspore, source: Path, port: Path, build: str, arrays, hidden: str = "",
                  batch_axis: int = 1) -> tuple[str, str]:
    """The last stage the port at `port` reaches, and why it stops there ("" at PASS)."""
    from ascend_lsp.port.convert_weights import convert_state, write_checkpoint

    reference, state = run_torch(torch, source, build, arrays, hidden, batch_axis)
    stage = "ported"
    try:
        module = load_module(port, f"ms_{port.stem}")
        stage = "imports"
        net = eval(build, vars(module))
        stage = "builds"
        conversion = convert_state({k: v.numpy() for k, v in state.items()}, source.read_text(encoding="utf-8"))
        if conversion.tensors:
            checkpoint = port.with_suffix(".ckpt")
            write_checkpoint(conversion.tensors, str(checkpoint))
            not_loaded, unused = load_strictly(mindspore, net, checkpoint)
        else:  # nothing to load (MindSpore refuses an empty checkpoint): the port must hold nothing either
            not_loaded = [p.name for p in net.get_parameters()] if hasattr(net, "get_parameters") else []
            unused = []
        if conversion.unmapped or not_loaded or unused:
            return stage, (f"not mapped {[k for k, _ in conversion.unmapped][:3]}, " if conversion.unmapped else
                           "") + f"{len(not_loaded)} not loaded {not_loaded[:3]}, {len(unused)} unused {unused[:3]}"
        stage = "loads"
        out = run_net(mindspore, net, arrays, hidden, batch_axis)
        stage = "runs"
    except Exception as exc:  # noqa: BLE001 - the stage's reason, whatever failed
        return stage, _reason(exc, port)
    verdict, reports = grade(torch, reference, out)
    if verdict == "PASS":
        return "PASS", ""
    return stage, "; ".join(f"{r['path']} {r['verdict']}: {r.get('reason', '')}" for r in reports
                            if r["verdict"] != "PASS")[:300]


def _reason(exc: BaseException, port: Path) -> str:
    """The exception and the last line of the port it came from (else the last frame)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    frame = next((f for f in reversed(frames) if f.filename == str(port)), frames[-1] if frames else None)
    where = f" ({Path(frame.filename).name}:{frame.lineno}: {(frame.line or '').strip()[:100]})" if frame else ""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}{where}"


def torch_references(text: str) -> list[str]:
    """torch imports and names left in a port outside the statements it marked MS301/MS302
    (docstrings and comments do not count)."""
    lines = text.split("\n")
    found = []

    def visit(node: ast.AST, marked: bool) -> None:
        if isinstance(node, ast.stmt):
            marked = node.lineno >= 2 and lines[node.lineno - 2].lstrip().startswith(("# MS301 ", "# MS302 "))
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if a.name.split(".")[0] == "torch")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
            found.append(node.module)
        elif isinstance(node, ast.Name) and node.id in ("torch", "F") and not marked:
            found.append(f"{node.id} (line {node.lineno})")
        for child in ast.iter_child_nodes(node):
            visit(child, marked)

    visit(ast.parse(text), False)
    return found


def grade(torch, reference, candidate) -> tuple[str, list[dict]]:
    """The worst verdict over a port's outputs against torch's, and one report per output (path,
    verdict, reason, metrics), with the worker's comparison and msprobe's cascade. `reference`
    holds torch tensors, `candidate` MindSpore tensors, nested alike."""
    thresholds = load_thresholds()
    parameters = metric_parameters(thresholds)
    ref, cand = dict(flatten(torch, "out", reference)), dict(flatten(torch, "out", candidate))
    reports = []
    for path in sorted(set(ref) | set(cand)):
        if path not in cand or path not in ref:
            reports.append({"path": path, "verdict": "ERROR", "reason": "missing on one side"})
            continue
        report = compare_values(torch, path, ref[path], cand[path], parameters["rel_err_cutoffs"],
                                parameters["rel_err_eps"], parameters["small_value"], False)
        verdict = grade_output(report, thresholds)
        reports.append({"path": path, "verdict": verdict.verdict, "reason": verdict.reason,
                        "metrics": report.get("metrics", {})})
    return worst(r["verdict"] for r in reports), reports
