"""After a module imports `transfer_to_npu`, what it maps runs on the NPU as written (rules/transfer_scope.py, the
`transfer-maps` rows of mappings/torch_npu/cuda.toml): info after an import at the module's level, and after one
inside a function for the rest of that function; a comparison, the code above the import, another function, and a
row it does not map as written keep their warnings."""

from __future__ import annotations

from ascend_lsp.analysis import analyze
from ascend_lsp.engine.config import Settings
from ascend_lsp.engine.model import Severity
from ascend_lsp.rules.transfer_scope import transfer_imports

SETTINGS = Settings(select=("NPU1",))
INFO, WARNING = Severity.INFO, Severity.WARNING

MODULE = '''import torch
import torch.distributed as dist

x = torch.zeros(1).cuda()
import torch_npu  # noqa: E402
from torch_npu.contrib import transfer_to_npu  # noqa: E402,F401

y = torch.zeros(1).cuda()
dist.init_process_group(backend="nccl")
torch.cuda.synchronize()
table = torch.cuda.DoubleTensor(2)
same = y.device.type == "cuda"
device = torch.device("cuda")


def step(batch):
    return batch.to("cuda")
'''

LOADER = '''import importlib.util

import torch


def before(x):
    return x.cuda()


class Loader:
    def load(self, path):
        model = torch.load(path).cuda()
        if importlib.util.find_spec("torch_npu") is not None:
            import torch_npu  # noqa: F401
            from torch_npu.contrib import transfer_to_npu  # noqa: F401
        model = model.to("cuda:0")
        torch.cuda.synchronize()
        return model


def after(x):
    return x.cuda()
'''


def severities(text: str) -> list[tuple[str, int, Severity]]:
    return [(f.code, f.range.start_line + 1, f.severity) for f in analyze(text, SETTINGS, "train.py").findings]


def test_an_import_at_the_modules_level_covers_what_follows_and_every_function() -> None:
    assert transfer_imports(MODULE) == [5]
    guarded = "try:\n    import torch_npu\n    from torch_npu.contrib import transfer_to_npu\nexcept ImportError:\n    pass\n"
    assert transfer_imports(guarded) == [2]
    assert severities(MODULE) == [
        ("NPU102", 4, WARNING),  # above the import
        ("NPU102", 8, INFO), ("NPU107", 9, INFO), ("NPU103", 10, INFO),
        ("NPU103", 11, WARNING),  # mapped to a float32 type: not as written
        ("NPU101", 12, INFO),  # a comparison in a module that handles `npu` (another reading, below)
        ("NPU101", 13, WARNING),  # `torch.device` is not rewritten: a CUDA device, compared later or not
        ("NPU101", 17, INFO),
    ]
    findings = analyze(MODULE, SETTINGS, "train.py").findings
    assert "transfer_to_npu` is imported" not in findings[5].message  # a comparison is not rewritten
    assert findings[1].message.endswith(
        "(After `transfer_to_npu` is imported (line 6), which maps this to the NPU: it runs there as written. Port it "
        "where the code must also run without `transfer_to_npu`.)")
    assert findings[1].fixes, "the port's fix is still offered"


def test_an_import_inside_a_function_covers_the_rest_of_it() -> None:
    assert transfer_imports(LOADER) == []  # not at the module's level: read from the function's own code
    assert severities(LOADER) == [
        ("NPU102", 7, WARNING),  # another function
        ("NPU102", 12, WARNING),  # above the import
        ("NPU101", 16, INFO), ("NPU103", 17, INFO),
        ("NPU102", 22, WARNING),  # another function, which may run before the loader
    ]


def test_a_comment_or_a_string_naming_it_is_no_import() -> None:
    text = '# from torch_npu.contrib import transfer_to_npu\nDOC = "import torch_npu.contrib.transfer_to_npu"\n'
    assert transfer_imports(text) == []
    assert severities(text + "x = y.cuda()\n") == [("NPU102", 3, WARNING)]


def test_lines_break_at_cr_and_crlf_too() -> None:
    for ending in ("\r", "\r\n"):
        assert transfer_imports(MODULE.replace("\n", ending)) == [5]
        assert severities(MODULE.replace("\n", ending))[1] == ("NPU102", 8, INFO)


def test_npu404_reads_a_commented_out_import_as_none() -> None:
    """Without a project, the file's own imports decide (Rule.transfer_only); a comment is no import."""
    script = "import torch\n{}\nscripted = torch.jit.script(model)\ntorch.jit.save(scripted, 'm.pt')\n"
    for line, severity in (("# from torch_npu.contrib import transfer_to_npu", INFO),
                           ("from torch_npu.contrib import transfer_to_npu", WARNING)):
        findings = analyze(script.format(line), Settings(select=("NPU404",))).findings
        assert [(f.code, f.severity) for f in findings] == [("NPU404", severity)], line
