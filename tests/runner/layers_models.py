"""Models for test_run_layers.py (read as text and run by the runner, not imported).

Net's weights and inputs are non-negative so that float16 rounding alone stays inside msprobe's
hundredth threshold even without a third side (a dump compared with compare-dumps): the only ERROR
its emulated fp16 run can produce is the overflow. Tower's are signed, as a model's are: its
float16 run is graded against the float16 benchmark.
"""

import numpy as np
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, 16)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.blocks(x))


def positive_net(scale=1.0):
    net = Net()
    with torch.no_grad():
        for parameter in net.parameters():
            parameter.abs_()
        net.blocks[1].fc1.weight.mul_(scale)
    return net


def faithful():
    return positive_net()(torch.rand(8, 16))


def fp16_overflow():
    return positive_net(1e5)(torch.rand(8, 16))


class Port(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.LeakyReLU()
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(self.norm(self.act(self.fc1(x))))


def port():
    return Port()(torch.randn(4, 16))


def port_ms():
    return _port_ms(slope=0.01)


# ascend-lsp: mindspore-pair=port_ms_default_slope
def port_slope():
    return port()


def port_ms_default_slope():
    return _port_ms(slope=None)


def _port_ms(slope):
    import mindspore as ms
    from mindspore import nn as msnn

    class PortMS(msnn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = msnn.Dense(16, 32)
            self.act = msnn.LeakyReLU() if slope is None else msnn.LeakyReLU(slope)  # MindSpore's default: 0.2
            self.norm = msnn.LayerNorm((32,), epsilon=1e-5)
            self.fc2 = msnn.Dense(32, 8)

        def construct(self, x):
            return self.fc2(self.norm(self.act(self.fc1(x))))

    return PortMS()(ms.Tensor(np.zeros((4, 16), np.float32)))


class Pool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Flatten()

    def forward(self, x):
        return self.head(self.pool(self.conv(x)))


def pooled():
    return Pool()(torch.randn(2, 3, 8, 8))


def pooled_ms():
    import mindspore as ms
    from mindspore import nn as msnn

    class PoolMS(msnn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = msnn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
            self.pool = msnn.MaxPool2d(2)  # MindSpore's stride default is 1, torch's is kernel_size
            self.head = msnn.Flatten()

        def construct(self, x):
            return self.head(self.pool(self.conv(x)))

    return PoolMS()(ms.Tensor(np.zeros((2, 3, 8, 8), np.float32)))


class Tower(nn.Module):
    """Issue 29's tower: six Linear-GELU-LayerNorm blocks with signed weights and inputs, whose
    near-zero LayerNorm outputs float16 rounding moves by more than 1 % relative."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(*[nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.LayerNorm(64))
                                      for _ in range(6)])
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.blocks(x))


def tower(scale=1.0):
    net = Tower()
    with torch.no_grad():
        net.blocks[3][0].weight.mul_(scale)  # fp32 sums near 1e6: float16 stops at 65504
    return net(torch.randn(32, 64))


def tower_overflow():
    return tower(1e6)
