"""A test file both `lsp-check` and the server read with the `tests` setting: one test that
runs only with CUDA, one that runs everywhere."""

SUITE = '''import pytest
import torch


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA")
def test_on_cuda():
    torch.zeros(1).to("cuda")


def test_everywhere():
    torch.zeros(1).to("cuda")
'''
