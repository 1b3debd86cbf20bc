"""What a torch run patches: random draws from the CPU generator, accelerator devices to the CPU
on the reference, module calls recorded."""

from __future__ import annotations

from .patches import Patches
from .sides import Recorder

RANDOM_FACTORIES = ("rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
                    "rand_like", "randn_like", "randint_like")
RANDOM_METHODS = ("normal_", "uniform_", "bernoulli_", "random_", "exponential_", "geometric_", "log_normal_",
                  "cauchy_")
DEVICE_FACTORIES = ("tensor", "as_tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye",
                    "zeros_like", "ones_like", "empty_like", "full_like", "empty_strided", "scalar_tensor",
                    "tril_indices", "triu_indices")
DEVICE_METHODS = ("new_tensor", "new_zeros", "new_ones", "new_empty", "new_full")
ACCELERATORS = ("cuda", "npu", "xpu", "mps")
DROPOUT_FUNCTIONS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")


def _cpu_if_accelerator(torch, device):
    """Map a device argument (str, torch.device or index) to the CPU if it names an accelerator."""
    if isinstance(device, int) and not isinstance(device, bool):
        return torch.device("cpu")
    if isinstance(device, (str, torch.device)):
        try:
            if torch.device(device).type in ACCELERATORS:
                return torch.device("cpu")
        except RuntimeError:
            return device
    return device


def patch_random(torch, patches: Patches, rec: Recorder, on_cpu: bool) -> None:
    """Random draws come from the CPU generator, then move: same values on every device."""

    def final_device(args, kwargs):
        if kwargs.get("device") is not None:
            device = kwargs["device"]
        else:
            device = next((a.device for a in args if isinstance(a, torch.Tensor)), None) or torch.get_default_device()
        device = torch.device(device) if not isinstance(device, torch.device) else device
        return torch.device("cpu") if on_cpu and device.type in ACCELERATORS else device

    def factory(name, original):
        def draw(*args, **kwargs):
            generator = kwargs.get("generator")
            if (generator is not None and generator.device.type != "cpu") or "out" in kwargs:
                return original(*args, **kwargs)
            device = final_device(args, kwargs)
            requires_grad = kwargs.pop("requires_grad", False)
            has_tensor = any(isinstance(a, torch.Tensor) for a in args)
            if "device" in kwargs or not has_tensor:
                kwargs["device"] = "cpu"
            args = tuple(a.to("cpu") if isinstance(a, torch.Tensor) else a for a in args)
            tensor = original(*args, **kwargs)
            rec.drew(name, tensor)
            if tensor.device != device:
                tensor = tensor.to(device)
            if requires_grad:
                tensor.requires_grad_(True)
                rec.leaf(tensor)
            return tensor
        return draw

    def method(name, original):
        def draw_(self, *args, **kwargs):
            generator = kwargs.get("generator")
            if generator is not None and generator.device.type != "cpu":
                return original(self, *args, **kwargs)
            if self.device.type == "cpu":
                result = original(self, *args, **kwargs)
                rec.drew(name, self)
                return result
            scratch = torch.empty(self.shape, dtype=self.dtype, device="cpu")
            original(scratch, *(a.to("cpu") if isinstance(a, torch.Tensor) else a for a in args), **kwargs)
            rec.drew(name, scratch)
            self.copy_(scratch)
            return self
        return draw_

    for name in RANDOM_FACTORIES:
        if hasattr(torch, name):
            patches.set(torch, name, factory(name, getattr(torch, name)))
    for name in RANDOM_METHODS:
        patches.set(torch.Tensor, name, method(name, getattr(torch.Tensor, name)))
    original_requires_grad = torch.Tensor.requires_grad_

    def requires_grad_(self, requires_grad=True):
        result = original_requires_grad(self, requires_grad)
        if requires_grad:
            rec.leaf(self)
        return result
    patches.set(torch.Tensor, "requires_grad_", requires_grad_)


def patch_devices_to_cpu(torch, patches: Patches) -> None:
    """CUDA/NPU code runs unchanged on the CPU: device arguments that name an accelerator become "cpu"."""

    def stay(self, *args, **kwargs):
        return self

    def moving(original):
        def to(self, *args, **kwargs):
            args = tuple(_cpu_if_accelerator(torch, a) for a in args)
            if "device" in kwargs:
                kwargs["device"] = _cpu_if_accelerator(torch, kwargs["device"])
            return original(self, *args, **kwargs)
        return to

    def creating(original):
        def create(*args, **kwargs):
            if kwargs.get("device") is not None:
                kwargs["device"] = _cpu_if_accelerator(torch, kwargs["device"])
            return original(*args, **kwargs)
        return create

    for owner in (torch.Tensor, torch.nn.Module):
        for name in ("cuda", "npu", "xpu", "mps"):
            patches.set(owner, name, stay)
        patches.set(owner, "to", moving(owner.to))
    for name in DEVICE_FACTORIES:
        patches.set(torch, name, creating(getattr(torch, name)))
    for name in DEVICE_METHODS:
        patches.set(torch.Tensor, name, creating(getattr(torch.Tensor, name)))
    # CUDA calls with no CPU meaning are no-ops on the reference.
    for name in ("synchronize", "empty_cache", "reset_peak_memory_stats"):
        patches.set(torch.cuda, name, lambda *a, **k: None)


def patch_module_calls(torch, patches: Patches, rec: Recorder) -> None:
    original_call = torch.nn.Module.__call__

    def call(self, *args, **kwargs):
        if rec.depth == 0:
            rec.top_call(self, args)
        rec.depth += 1
        try:
            return original_call(self, *args, **kwargs)
        finally:
            rec.depth -= 1

    def recording_call(self, *args, **kwargs):
        index = rec.layers.enter("module", self, type(self).__name__, args, kwargs)
        output = call(self, *args, **kwargs)
        rec.layers.exit(index, output)
        return output
    patches.set(torch.nn.Module, "__call__", call if rec.layers is None else recording_call)

    functional = torch.nn.functional
    for name in DROPOUT_FUNCTIONS:
        original = getattr(functional, name, None)
        if original is None:
            continue

        def dropout(input, p=0.5, training=True, *args, _original=original, **kwargs):
            if training and p > 0:
                rec.dropout = True
            return _original(input, p, training, *args, **kwargs)
        patches.set(functional, name, dropout)
