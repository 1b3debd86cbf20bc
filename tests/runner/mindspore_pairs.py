"""Torch functions and their MindSpore ports, run by test_run_mindspore.py (read as text).

The ports build their input from zeros on purpose: the runner replaces the arguments of the
outermost Cell call with the torch run's inputs and loads the torch weights by name.
"""

import numpy as np
import torch
from torch import nn


def block():
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
    x = torch.randn(4, 3, 8, 8)
    return net(x)


def block_ms():
    import mindspore as ms
    from mindspore import nn as msnn
    net = msnn.SequentialCell(msnn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True),
                              msnn.BatchNorm2d(8), msnn.ReLU())
    net.set_train()
    x = ms.Tensor(np.zeros((4, 3, 8, 8), np.float32))
    return net(x)


# ascend-lsp: mindspore-pair=block_ms_momentum
def block_momentum():
    return block()


def block_ms_momentum():
    import mindspore as ms
    from mindspore import nn as msnn
    net = msnn.SequentialCell(msnn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True),
                              msnn.BatchNorm2d(8, momentum=0.1), msnn.ReLU())
    net.set_train()
    return net(ms.Tensor(np.zeros((4, 3, 8, 8), np.float32)))


def drop():
    net = nn.Sequential(nn.Linear(64, 64), nn.Dropout(0.2))
    return net(torch.randn(32, 64))


def drop_ms():
    import mindspore as ms
    from mindspore import nn as msnn
    net = msnn.SequentialCell(msnn.Dense(64, 64), msnn.Dropout(p=0.2))
    net.set_train()
    return net(ms.Tensor(np.zeros((32, 64), np.float32)))


# ascend-lsp: mindspore-pair=drop_keep_prob_ms
def drop_keep_prob():
    return drop()


def drop_keep_prob_ms():
    import mindspore as ms
    from mindspore import nn as msnn
    net = msnn.SequentialCell(msnn.Dense(64, 64), msnn.Dropout(0.2))
    net.set_train()
    return net(ms.Tensor(np.zeros((32, 64), np.float32)))
