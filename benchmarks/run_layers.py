"""Cost of "find the layer" (`--layers`) on a ResNet-50-sized model on the CPU.

    PYTHONPATH=server python benchmarks/run_layers.py [-n 5] [--target cpu] [--autocast float16] [--batch 2]
                                                      [--threads 1] [--dump]

Runs the same function on a warm worker, alternating a plain run and a `--layers` run (and,
with --dump, a run that also writes both msprobe dumps), and prints each one's round-trip
median, min and max, and the ratio of the medians. Goal: `--layers` ≤ 2× the plain run.
With --autocast (the emulate target) both runs include the third side, the reference model
run again at that dtype (msprobe's benchmark comparison), and every layer is compared twice.
The model is ResNet-50 (Bottleneck blocks 3-4-6-3, 25.6 M parameters, 151 module calls per
forward) written out here so that torchvision is not needed. The machine may be shared:
the spread says how much to trust the figures. The worker runs with OMP_NUM_THREADS=--threads
(default 1): on an oversubscribed machine OpenMP threads spin against other processes and the
times measure the contention, not the work.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from ascend_lsp.runner import Emulation, Job, RunnerPool  # noqa: E402

MODEL = """
import torch
from torch import nn


class Bottleneck(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        width, out = planes, planes * 4
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != out:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, out, 1, stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        layers, inplanes = [], 64
        for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            stage = [Bottleneck(inplanes, planes, stride)] + [Bottleneck(planes * 4, planes) for _ in range(blocks - 1)]
            layers.append(nn.Sequential(*stage))
            inplanes = planes * 4
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


torch.manual_seed(0)
MODEL = ResNet50().eval()


def forward():
    with torch.no_grad():
        return MODEL(torch.randn(BATCH, 3, 224, 224))
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=5, help="runs of each kind")
    parser.add_argument("--target", default="cpu", choices=("cpu", "emulate"))
    parser.add_argument("--autocast", choices=("float16", "bfloat16"), help="emulate: under CPU autocast")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS for the worker (0: torch's default)")
    parser.add_argument("--dump", action="store_true", help="also time --layers --dump (tensors written)")
    args = parser.parse_args()
    if args.autocast and args.target != "emulate":
        parser.error("--autocast needs --target emulate")
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)  # the worker inherits it
    with tempfile.TemporaryDirectory() as folder, RunnerPool() as pool:
        path = Path(folder) / "resnet50.py"
        path.write_text(MODEL.replace("BATCH", str(args.batch)))
        kinds = {"plain": {}, "--layers": {"layers": "module"}}
        if args.dump:
            kinds["--layers --dump"] = {"dump": str(Path(folder) / "dump")}
        times: dict[str, list[float]] = {kind: [] for kind in kinds}
        common = dict(path=str(path), function="forward", target=args.target, timeout=900,
                      emulation=Emulation(autocast=args.autocast))
        warm = pool.run(Job(**common))
        if not warm.ok:
            print(f"run failed: {warm.message}", file=sys.stderr)
            return 2
        for _ in range(args.n):
            for kind, options in kinds.items():
                result = pool.run(Job(**common, **options))
                if not result.ok:
                    print(f"{kind} failed: {result.message}", file=sys.stderr)
                    return 2
                times[kind].append(result.timing["round_trip_s"])
        layers = len(result.layers or [])
        threads = args.threads or "default"
        third = f", third side in {result.benchmark['dtype']}" if result.benchmark else ""
        print(f"ResNet-50, batch {args.batch}, target {args.target}{' autocast ' + args.autocast if args.autocast else ''}"
              f"{third}, {layers} module calls, {threads} thread(s), {args.n} runs each (round trip on a warm worker, "
              f"seconds)")
        plain = statistics.median(times["plain"])
        for kind, values in times.items():
            median = statistics.median(values)
            print(f"  {kind:16} median {median:7.3f}  min {min(values):7.3f}  max {max(values):7.3f}  "
                  f"×{median / plain:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
