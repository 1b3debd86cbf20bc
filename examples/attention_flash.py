"""A transformer block that uses flash-attention, apex and a Triton kernel on NVIDIA GPUs."""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl
from apex.normalization import FusedLayerNorm
from apex.optimizers import FusedAdam
from flash_attn import flash_attn_func


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * scale, mask=mask)


def rotary(x: torch.Tensor, theta: float = 10000.0) -> torch.Tensor:
    d = x.shape[-1]
    freqs = 1.0 / theta ** (torch.arange(0, d, 2, dtype=torch.float32, device=x.device) / d)
    angles = torch.outer(torch.arange(x.shape[1], device=x.device), freqs)
    rot = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * rot[None, :, None, :]).flatten(3).type_as(x)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm = FusedLayerNorm(dim)
        self.dropout = dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, s, 3, self.heads, -1).unbind(2)
        q, k = rotary(q), rotary(k)
        o = flash_attn_func(q, k, v, self.dropout if self.training else 0.0, causal=True,
                            softmax_scale=1 / math.sqrt(q.shape[-1]))
        return x + self.out(o.reshape(b, s, -1))


def make(dim: int = 512, heads: int = 8):
    model = Attention(dim, heads).half().cuda()
    if torch.cuda.get_device_capability()[0] < 8:
        raise RuntimeError("flash-attention needs an Ampere GPU or newer")
    return model, FusedAdam(model.parameters(), lr=1e-4)
