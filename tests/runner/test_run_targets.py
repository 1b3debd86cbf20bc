"""Lens targets and MindSpore pairing: a pure ast parse, no torch."""

from ascend_lsp.runner import extract_targets, find_mindspore_pair
from ascend_lsp.runner.targets import function_line

SOURCE = '''\
import torch

def no_args():
    return torch.ones(2)

def defaults(a=1, *args, b=2, **kw):
    pass

def needs_arg(x):
    pass

def test_plain():
    assert True

def test_fixture(tmp_path):
    pass

async def coroutine():
    pass

class Model:
    def forward(self):
        pass

# ascend-lsp: mindspore-pair=port
@staticmethod
def marked():
    pass

def port():
    pass

def block():
    pass

def block_ms():
    pass

def inline():  # ascend-lsp: mindspore-pair=block_ms
    pass
'''


def test_extract_targets_finds_functions_without_required_arguments():
    names = [name for name, _ in extract_targets(SOURCE)]
    assert names == ["no_args", "defaults", "test_plain", "marked", "port", "block", "block_ms", "inline"]
    assert dict(extract_targets(SOURCE))["no_args"] == 2  # 0-based line of the def


def test_extract_targets_tolerates_broken_code():
    assert extract_targets("def broken(:\n") == []


def test_pairing_by_marker_and_by_suffix():
    assert find_mindspore_pair(SOURCE, "marked") == "port"
    assert find_mindspore_pair(SOURCE, "inline") == "block_ms"
    assert find_mindspore_pair(SOURCE, "block") == "block_ms"
    assert find_mindspore_pair(SOURCE, "no_args") is None
    assert find_mindspore_pair(SOURCE, "missing") is None


def test_function_line_is_one_based():
    assert function_line(SOURCE, "no_args") == 3
    assert function_line(SOURCE, "missing") is None
