"""A run's return value as named CPU tensors, the form every comparison takes."""

from __future__ import annotations

from typing import Any

MISSING = object()


def is_tensor_like(value) -> bool:
    kind = type(value)
    return kind.__module__.split(".")[0] in ("torch", "mindspore") and kind.__name__ in ("Tensor", "Parameter")


def to_cpu(torch, tensor):
    return tensor.detach().to("cpu", copy=True)


def flatten(torch, path: str, value, detach: bool = True) -> list[tuple[str, Any]]:
    """Tensors and scalars by path (`out[0]`, `out['logits']`), as detached CPU torch tensors
    (or the live tensors with `detach=False`)."""
    if value is None:
        return []
    if isinstance(value, torch.Tensor):
        return [(path, to_cpu(torch, value) if detach else value)]
    kind = type(value)
    if kind.__module__.startswith("mindspore") and hasattr(value, "asnumpy"):
        return [(path, torch.from_numpy(value.asnumpy().copy()))]
    if kind.__module__ == "numpy" and hasattr(value, "dtype"):
        import numpy
        return [(path, torch.from_numpy(numpy.array(value, copy=True)))]
    if isinstance(value, bool):
        return [(path, torch.tensor(value))]
    if isinstance(value, (int, float)):
        return [(path, torch.tensor(value, dtype=torch.int64 if isinstance(value, int) else torch.float64))]
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in flatten(torch, f"{path}[{key!r}]", item, detach)]
    if isinstance(value, (list, tuple)):
        return [leaf for i, item in enumerate(value) for leaf in flatten(torch, f"{path}[{i}]", item, detach)]
    if isinstance(value, torch.nn.Module) or callable(value):
        return []
    return [(path, value)]


def describe_value(torch, value) -> dict:
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch.")}
    return {"repr": repr(value)[:200]}
