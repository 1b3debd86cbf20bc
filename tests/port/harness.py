"""Run a torch model and its port on the same inputs and weights (tests and benchmark)."""

from __future__ import annotations

import ast
from pathlib import Path

from ascend_lsp.port.verify import STAGES, grade, load_module, torch_reference, verify

__all__ = ["STAGES", "grade", "load_module", "run_mindspore", "run_torch", "stage_reached", "torch_references"]


def run_torch(torch, path: Path, build: str, arrays, hidden: str = "", batch_axis: int = 1):
    """The torch model (eval mode, seeded, BatchNorm statistics measured), its output on `arrays`,
    and its state dict."""
    if not hidden:
        return torch_reference(torch, path, build, arrays, measure_batchnorm)
    torch.manual_seed(0)
    model = eval(build, vars(load_module(path, f"torch_{path.stem}")))
    args = [_tensor(torch.from_numpy, a) for a in arrays]
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


def stage_reached(torch, mindspore, source: Path, port: Path, build: str, arrays) -> tuple[str, str]:
    """The last stage the port at `port` reaches, and why it stops there ("" at PASS): `lsp-check port
    --verify`'s verification, with BatchNorm statistics measured first."""
    result = verify(torch, mindspore, source, port, build, arrays, port.with_suffix(".ckpt"), measure_batchnorm)
    if result.stage != "PASS":
        drain_kernel_error(mindspore)
    return result.stage, result.reason


def drain_kernel_error(mindspore) -> None:
    """MindSpore raises a kernel's failure (`InplaceFillScalar unregistered`) again at the next
    launches: take it here, so that the next model in this process does not stop on it."""
    for _ in range(3):
        try:
            (mindspore.ops.zeros(1) + 1).asnumpy()
            return
        except RuntimeError:
            continue


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
