"""What to run and where: the `Job` a caller fills in, and its wire form for the worker."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..knowledge.chips import load_chips
from ..knowledge.thresholds import load_thresholds
from ..knowledge.weights import load_weight_table
from ..source_codec import read_source
from ..sources import SourceError
from .grading import metric_parameters
from .port_pair import PortPairError, port_file, port_options
from .targets import find_mindspore_pair

PROTOCOL = 1  # must equal worker/serve.PROTOCOL (tests/runner checks it)
RUN_TARGETS = ("npu", "cuda", "cpu", "emulate", "mindspore")
DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY_LIMIT_MB = 8192


class JobError(ValueError):
    """The job cannot be sent (unknown target, unreadable file, no MindSpore pair)."""


@dataclass
class Emulation:
    """The NPU precision modes `emulate` reproduces on the CPU (defaults: Ascend A2/A3)."""

    conv_hf32: bool = True  # torch_npu's default for fp32 convolutions
    matmul_hf32: bool = False  # off by default; on with torch.npu.matmul.allow_hf32 = True
    autocast: str | None = None  # "float16" or "bfloat16"
    chip: str | None = None  # a chip's name or alias: what it does to numbers (mappings/platform/chips.toml)

    def to_wire(self) -> dict:
        wire: dict = {"conv_hf32": self.conv_hf32, "matmul_hf32": self.matmul_hf32, "autocast": self.autocast}
        if self.chip is None:
            return wire
        chips = load_chips()
        try:
            chip = chips.chips[chips.canonical(self.chip)]
        except ValueError as exc:
            raise JobError(f"`chip` {exc}") from None
        if self.autocast == "bfloat16" and "bf16" in chip.lacks:
            raise JobError(f"chip {chip.name} has no bfloat16: autocast to bfloat16 cannot be emulated there")
        return {**wire, "chip": chip.name, "hf32": chip.hf32, "fp16_saturation": "saturation" in chip.lacks,
                "assumptions": [f"chip {chip.name}: {a}" for a in chip.emulation]}


@dataclass
class Job:
    """One run: a function (or a 1-based inclusive line range) of a file, on a target.

    `interpreter` runs a local worker (default: this interpreter); `command` is a template
    for any other launcher (see `command.py`), and wins when both are set.
    """

    path: str
    function: str | None = None
    lines: tuple[int, int] | None = None
    text: str | None = None  # the editor's buffer; read from `path` when None
    target: str = "npu"
    grad: bool = False
    seed: int = 0
    timeout: float = DEFAULT_TIMEOUT
    memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB
    fallback_cpu_disable: bool = False
    emulation: Emulation = field(default_factory=Emulation)
    mindspore_pair: str | None = None  # found by `find_mindspore_pair` when None
    mindspore_device: str | None = None  # MindSpore's own default when None
    mindspore_port: str | None = None  # a ported file (`lsp-check port`) whose same-named function pairs
    capture_inputs: bool = False  # hashes of every random draw on both sides, in the result
    interpreter: str | None = None
    command: str | None = None
    module: str | None = None  # module name for the file (default: its stem)
    layers: str | None = None  # "module" (every nn.Module / Cell call) or "api" (also torch functions)
    dump: str | None = None  # write both sides in msprobe's dump layout under this folder (implies layers)
    dumps: tuple[str, str] | None = None  # compare two msprobe dumps (bench, npu) instead of running
    cwd: str | None = None  # the folder the code runs in (its project); the worker's own when None

    @property
    def entry(self) -> str:
        return self.function or (f"lines {self.lines[0]}-{self.lines[1]}" if self.lines else "?")

    def source_text(self) -> str:
        if self.text is None:
            # Read as lsp-check reads files: a FIFO, a device or a file over the size limit
            # is refused at once (a FIFO would block the read until a writer came).
            try:
                self.text = read_source(str(self.path)).text
            except SourceError as exc:
                raise JobError(f"{self.path}: {exc}") from None
        return self.text

    def to_wire(self) -> dict:
        if self.dumps:
            return {"protocol": PROTOCOL, "id": uuid.uuid4().hex, "kind": "compare-dumps",
                    "bench": str(Path(self.dumps[0]).resolve()), "npu": str(Path(self.dumps[1]).resolve()),
                    "options": {"memory_limit_mb": self.memory_limit_mb},
                    "metrics": metric_parameters(load_thresholds())}
        if self.target not in RUN_TARGETS:
            raise JobError(f"unknown target {self.target!r} (one of {', '.join(RUN_TARGETS)})")
        if not self.function and not self.lines:
            raise JobError("name a function or a line range")
        text = self.source_text()
        options: dict = {"grad": self.grad, "seed": self.seed, "memory_limit_mb": self.memory_limit_mb,
                         "capture_inputs": self.capture_inputs}
        if self.target == "npu":
            options["fallback_cpu_disable"] = self.fallback_cpu_disable
        if self.target == "emulate":
            options["emulate"] = self.emulation.to_wire()
        if self.layers or self.dump:
            if self.layers not in (None, "module", "api"):
                raise JobError(f"layers must be 'module' or 'api', got {self.layers!r}")
            options["layers"] = self.layers or "module"
        if self.dump:
            options["dump"] = {"dir": str(Path(self.dump).resolve()), "tensors": True}
        if self.target == "mindspore":
            if not self.function:
                raise JobError("the mindspore target pairs functions: name one, not a line range")
            in_file = find_mindspore_pair(text, self.function)
            port = port_file(self.path, self.mindspore_port, bool(in_file or self.mindspore_pair))
            pair = self.mindspore_pair or (self.function if port else in_file)
            if not pair:
                raise JobError(f"no MindSpore port for {self.function}(): define {self.function}_ms(), mark it "
                               f"with `# ascend-lsp: mindspore-pair=<name>`, or port the file (`lsp-check port`)")
            options["mindspore"] = {"pair": pair, "device": self.mindspore_device, "weights": weight_rows()}
            if port:
                try:
                    options["mindspore"]["port"] = port_options(port, pair)
                except PortPairError as exc:
                    raise JobError(str(exc)) from None
        return {
            "protocol": PROTOCOL,
            "id": uuid.uuid4().hex,
            "kind": "run",
            "file": {"path": str(self.path), "text": text, "module": self.module or Path(self.path).stem,
                     "cwd": self.cwd},
            "entry": {"function": self.function} if self.function else {"lines": list(self.lines)},
            "target": self.target,
            "options": options,
            "metrics": metric_parameters(load_thresholds()),
        }


def weight_rows() -> list[dict]:
    """The weight table in the worker's wire form: one row per renamed torch parameter."""
    table = load_weight_table()
    return [{"torch-module": layer, "torch": name, "mindspore": new,
             **({"transform": table.transforms[layer, name]} if (layer, name) in table.transforms else {})}
            for layer, names in table.renames.items() for name, new in names.items()]
