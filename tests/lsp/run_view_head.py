import numpy as np
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.LeakyReLU()
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def head():
    return Head()(torch.randn(4, 16))


def head_ms():
    import mindspore as ms
    from mindspore import nn as msnn

    class HeadMS(msnn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = msnn.Dense(16, 32)
            self.act = msnn.LeakyReLU()  # MindSpore's default slope is 0.2, torch's 0.01
            self.fc2 = msnn.Dense(32, 8)

        def construct(self, x):
            return self.fc2(self.act(self.fc1(x)))

    return HeadMS()(ms.Tensor(np.zeros((4, 16), np.float32)))
