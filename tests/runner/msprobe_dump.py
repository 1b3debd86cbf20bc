"""Take a real msprobe dump (PrecisionDebugger, level L0, task tensor) of a small model on the CPU.

Run as a script by test_run_layers.py: `python msprobe_dump.py DUMP_DIR [--perturb]`;
--perturb adds 0.5 to one weight of fc2, the layer the comparison must then point at.
"""

import json
import os
import sys

import torch
from msprobe.pytorch import PrecisionDebugger
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def main(dump_dir: str, perturb: bool) -> None:
    torch.manual_seed(0)
    net = Net()
    if perturb:
        with torch.no_grad():
            net.fc2.weight[0].add_(0.5)
    config = os.path.join(dump_dir, "config.json")
    os.makedirs(dump_dir, exist_ok=True)
    with open(config, "w") as f:
        json.dump({"task": "tensor", "dump_path": dump_dir, "rank": [], "step": [], "level": "L0",
                   "tensor": {"scope": [], "list": [], "data_mode": ["all"]}}, f)
    debugger = PrecisionDebugger(config_path=config)
    debugger.start(model=net)
    net(torch.randn(2, 8))
    debugger.stop()
    debugger.step()


if __name__ == "__main__":
    main(sys.argv[1], "--perturb" in sys.argv[2:])
