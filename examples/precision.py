"""Small functions to check with "Run on NPU" (or `lsp-check run examples/precision.py::conv_block`)."""

import torch
import torch.nn as nn


def conv_block():
    torch.manual_seed(0)
    block = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU())
    x = torch.randn(4, 16, 28, 28, device="cuda")
    return block.cuda()(x)


def attention_scores():
    q = torch.randn(2, 8, 128, 64, device="cuda")
    k = torch.randn(2, 8, 128, 64, device="cuda")
    return torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-1)
