"""The registry archives the model tests read: checksums, and the definitions taken from a file."""

from __future__ import annotations

import pytest

from . import sources
from .sources import Archive, definitions

FILE = '''"""A model file."""
import math
import torch
import numpy as np
from torch import nn, Tensor
from typing import Optional
from .utils import helper
from lightning import LightningModule

try:
    from torch.nn.functional import scaled_dot_product_attention
    SDPA = True
except ImportError:
    SDPA = False
LIMIT = 4

@torch.no_grad()
def unused():
    return np.zeros(1)


class Net(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return helper(x) * math.pi


class Module(LightningModule):
    pass
'''


def test_definitions_take_the_named_ones_with_the_torch_numpy_and_standard_imports_they_use():
    assert definitions([(FILE, ("Net", "unused"))]) == '''import math
import torch
import numpy as np
from torch import nn, Tensor


@torch.no_grad()
def unused():
    return np.zeros(1)


class Net(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return helper(x) * math.pi
'''
    with pytest.raises(ValueError, match="no top-level definition of Missing"):
        definitions([(FILE, ("Net", "Missing"))])


def test_definitions_take_the_assignment_or_try_statement_that_binds_a_name():
    assert definitions([(FILE, ("SDPA", "LIMIT"))]) == '''

try:
    from torch.nn.functional import scaled_dot_product_attention
    SDPA = True
except ImportError:
    SDPA = False


LIMIT = 4
'''
    with pytest.raises(ValueError, match="no top-level definition of Missing"):
        definitions([(FILE, ("Net", "Missing"))])


def test_a_cached_archive_with_another_checksum_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "CACHE", tmp_path)
    (tmp_path / "pkg-1.0-py3-none-any.whl").write_bytes(b"not the pinned archive")
    archive = Archive("pkg==1.0", "pkg-1.0-py3-none-any.whl", "0" * 64)
    with pytest.raises(ValueError, match="not the pinned 0000"):
        archive.read("pkg/model.py")


def test_an_archive_pip_cannot_get_is_unreachable_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "CACHE", tmp_path)
    for name, value in (("PIP_NO_INDEX", "1"), ("PIP_CONFIG_FILE", "/dev/null"), ("PIP_FIND_LINKS", str(tmp_path))):
        monkeypatch.setenv(name, value)  # no index, no links: what pip does without the registry
    with pytest.raises(sources.Unreachable, match="pip download robustbench==1.1.1 failed"):
        sources.ROBUSTBENCH.read("robustbench/model_zoo/architectures/resnet.py")
    assert list(tmp_path.iterdir()) == []
