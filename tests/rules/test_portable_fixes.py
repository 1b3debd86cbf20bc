"""The portable style's fixes where the fixture files do not reach: exact texts after
`fix-style = "portable"`, and what is left unfixed, and why."""

from __future__ import annotations

import pytest

from ascend_lsp.analysis import analyze, fix_text
from ascend_lsp.engine.config import Settings
from ascend_lsp.rules.portable_fixes import MAX_READ, lowest_allowed

PORTABLE = Settings(fix_style="portable")
BOUND = 'accelerator_device = torch.accelerator.current_accelerator() or torch.device("cpu")\n'


def fixed(text: str) -> str:
    result = fix_text(text, PORTABLE, "train.py", unsafe=True)
    again = fix_text(result.text, PORTABLE, "train.py", unsafe=True)
    assert again.text == result.text
    return result.text


def test_variables_behind_a_backend_check_only_where_the_statement_sets_them() -> None:
    text = ('import os\nimport torch\n\nos.environ["NCCL_IB_TC"] = "106"  # tuned\n'
            'os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")\nvisible = os.getenv("CUDA_VISIBLE_DEVICES")\n'
            'subprocess.run(["x"], env={"CUDA_VISIBLE_DEVICES": "0"})\n')
    assert fixed(text) == (
        'import os\nimport torch\n' + BOUND + '\n'
        'if accelerator_device.type == "cuda":\n    os.environ["NCCL_IB_TC"] = "106"\n'
        'elif accelerator_device.type == "npu":\n    os.environ["HCCL_RDMA_TC"] = "106"  # tuned\n'
        'if accelerator_device.type == "cuda":\n    os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")\n'
        'elif accelerator_device.type == "npu":\n    os.environ.setdefault("HCCL_SOCKET_IFNAME", "eth0")\n'
        # a name bound in neither branch on the CPU; a subprocess that must run everywhere: left as they are
        'visible = os.getenv("CUDA_VISIBLE_DEVICES")\nsubprocess.run(["x"], env={"CUDA_VISIBLE_DEVICES": "0"})\n')


def test_a_file_that_imports_no_torch_at_its_top_is_not_made_to() -> None:
    for text in ('import os\n\nos.environ["NCCL_IB_TC"] = "106"\n',
                 'DEVICE = "cuda"\n',
                 'def main():\n    import torch\n    return torch.ones(1).cuda()\n'):
        assert fixed(text) == text
    assert fixed('from torch import nn\n\nm = nn.Linear(1, 1).cuda()\n') == (
        'from torch import nn\nimport torch\n' + BOUND + '\nm = nn.Linear(1, 1).to(accelerator_device)\n')


def test_device_strings() -> None:
    text = ('import torch\n\nx = torch.device("cuda:{}".format(0))\ny = torch.device(u"cuda")\n'
            'z = torch.device(r"cuda:0")\nstate = torch.load("m.pt", map_location="cuda:0")\n'
            'kernels = {"cuda": 1, "cpu": 2}\nw = torch.device("cuda" ":0")\n')
    assert fixed(text) == (
        'import torch\n' + BOUND + '\nx = torch.device(f"{accelerator_device.type}:{{}}".format(0))\n'
        'y = torch.device(u"cuda")\n'  # a u-string cannot become an f-string
        'z = torch.device(fr"{accelerator_device.type}:0")\n'
        'state = torch.load("m.pt", map_location=accelerator_device)\n'  # torch.load cannot restore to "cpu:0"
        'kernels = {"cuda": 1, "cpu": 2}\n'  # a key among others: no expression there
        'w = torch.device("cuda" ":0")\n')  # implicitly concatenated pieces


def test_guards_inside_expressions_and_blocks() -> None:
    text = ('import torch\n\ntotal = (\n    torch.cuda.memory_allocated()\n)\n'
            'stats = [torch.cuda.memory_stats(),\n         torch.cuda.empty_cache()]\n'
            'if True:\n    torch.cuda.synchronize()  # wait\n')
    assert fixed(text) == (
        'import torch\n\ntotal = (\n    (torch.accelerator.memory_allocated() if torch.accelerator.is_available() else 0)\n)\n'
        'stats = [(torch.accelerator.memory_stats() if torch.accelerator.is_available() else {}),\n'
        '         (torch.accelerator.empty_cache() if torch.accelerator.is_available() else None)]\n'
        'if True:\n    if torch.accelerator.is_available():\n        torch.accelerator.synchronize()  # wait\n')


def test_events_time_only_where_there_is_an_accelerator() -> None:
    # torch.Event(...).record() raises "cpu backend doesn't support events." without an accelerator
    text = ('import torch\n\ndef run():\n    start = torch.cuda.Event(enable_timing=True)\n'
            '    end = torch.cuda.Event(enable_timing=True)\n    start.record()\n    end.record()\n'
            '    end.synchronize()\n    print(start.elapsed_time(end))\n')
    assert fixed(text) == (
        'import torch\n\ndef run():\n    start = torch.Event(enable_timing=True)\n'
        '    end = torch.Event(enable_timing=True)\n    if torch.accelerator.is_available():\n        start.record()\n'
        '    if torch.accelerator.is_available():\n        end.record()\n    if torch.accelerator.is_available():\n        end.synchronize()\n'
        '    print((start.elapsed_time(end) if torch.accelerator.is_available() else 0.0))\n')
    # an event used otherwise (passed on, or bound again) keeps torch.cuda: its uses cannot all be guarded;
    # so does one bound at module level, whose uses are in statements analysed apart
    for other in ('    stream.wait_event(start)\n', '    start = None\n'):
        text = 'import torch\n\ndef run(stream):\n    start = torch.cuda.Event()\n    start.record()\n' + other
        assert fixed(text) == text
    text = 'import torch\n\nstart = torch.cuda.Event()\nstart.record()\n'
    assert fixed(text) == text
    # a broken block elsewhere in the file leaves the function whole: its uses are all known
    text = 'import torch\n\ndef run():\n    start = torch.cuda.Event()\n    start.record()\n\ndef broken(:\n'
    assert fixed(text) == ('import torch\n\ndef run():\n    start = torch.Event()\n'
                           '    if torch.accelerator.is_available():\n        start.record()\n\ndef broken(:\n')


def test_amp_arguments_and_keywords() -> None:
    text = ('import torch\n\nwith torch.autocast("cuda", enabled=False):\n    pass\n'
            'scaler = torch.cuda.amp.GradScaler(\n    init_scale=1024,\n)\n')
    assert fixed(text) == (
        'import torch\n' + BOUND + '\nwith torch.autocast(accelerator_device.type, enabled=False):\n    pass\n'
        'scaler = torch.amp.GradScaler(accelerator_device.type,\n'
        '    init_scale=1024, enabled=accelerator_device.type != "cpu",\n)\n')


def test_an_imported_name_used_otherwise_keeps_its_import() -> None:
    text = 'import torch\nfrom torch.cuda.amp import autocast\n\nctx = autocast\nwith autocast():\n    pass\n'
    assert fixed(text) == (
        'import torch\nfrom torch.cuda.amp import autocast\n' + BOUND + '\nctx = autocast\n'
        'with torch.amp.autocast(accelerator_device.type, enabled=accelerator_device.type != "cpu"):\n    pass\n')


def test_a_name_the_file_uses_already_gets_no_device() -> None:
    text = 'import torch\naccelerator_device = "mine"\n\nx = torch.ones(1).cuda()\ny = torch.cuda.device_count()\n'
    assert fixed(text) == ('import torch\naccelerator_device = "mine"\n\nx = torch.ones(1).cuda()\n'
                           'y = torch.accelerator.device_count()\n')  # a rename needs no device


def test_the_device_in_a_comment_or_a_string_is_neither_bound_nor_taken() -> None:
    text = ('import torch\n# accelerator_device: where the tensors go\nDOC = """\n'
            'accelerator_device = torch.accelerator.current_accelerator() or torch.device("cpu")\n"""\n'
            'x = torch.ones(1).cuda()\nprint("accelerator_device")\n')
    assert fixed(text) == (
        'import torch\n' + BOUND + '# accelerator_device: where the tensors go\nDOC = """\n'
        'accelerator_device = torch.accelerator.current_accelerator() or torch.device("cpu")\n"""\n'
        'x = torch.ones(1).to(accelerator_device)\nprint("accelerator_device")\n')


@pytest.mark.parametrize(("binding", "what"), [
    ('def place(accelerator_device):\n    return torch.ones(1).cuda()\n', "an argument on line 3"),
    ('f = lambda accelerator_device: torch.ones(1).cuda()\n', "an argument on line 3"),
    ('xs = [torch.ones(1).cuda() for accelerator_device in range(3)]\n', "an assignment on line 3"),
    ('def f():\n    global accelerator_device\n    accelerator_device = 1\n    return torch.ones(1).cuda()\n',
     "a `global` statement on line 4"),
    ('def f():\n    return torch.ones(1).cuda()\n\naccelerator_device = "gpu0"\nf()\n', "an assignment on line 6"),
    ('class Config:\n    accelerator_device = "npu:0"\n    weights = torch.ones(1).cuda()\n',
     "an assignment on line 4"),
    ('from config import device as accelerator_device\n', "an import on line 3"),
    ('try:\n    pass\nexcept OSError as accelerator_device:\n    pass\n', "an `except ... as` on line 5"),
    ('if (accelerator_device := 3):\n    pass\n', "an assignment on line 3"),
    ('from config import *\nprint(accelerator_device)\n', "an import on line 3"),
])
def test_any_other_binding_of_the_name_leaves_every_use_of_the_device_unfixed_and_says_why(binding: str,
                                                                                          what: str) -> None:
    text = 'import torch\n\n' + binding + 'y = torch.ones(1).cuda()\n'
    assert fixed(text) == text
    findings = [f for f in analyze(text, PORTABLE).findings if f.code == "NPU102"]
    assert findings and all(f.message.endswith(
        f" No portable fix: {what} binds `accelerator_device`, the name the portable fixes give the device.")
        and [fix.style for fix in f.fixes] == ["npu"] for f in findings)
    # what needs no device is still fixed portably
    assert fixed(text + "n = torch.cuda.device_count()\n") == text + "n = torch.accelerator.device_count()\n"


def test_the_fixes_own_binding_is_read_after_blank_and_comment_lines() -> None:
    # isort separates the binding from the imports with a blank line
    text = 'import torch\n\n# where tensors go\n' + BOUND + '\nx = torch.ones(1).cuda()\n'
    assert fixed(text) == text.replace(".cuda()", ".to(accelerator_device)")
    # beyond BINDING_LINES below the imports it is a binding like any other
    far = 'import torch\n' + '\n' * 6 + BOUND + 'x = torch.ones(1).cuda()\n'
    assert fixed(far) == far


def test_a_file_that_names_the_device_and_does_not_parse_gets_no_portable_fix() -> None:
    text = 'import torch\n' + BOUND + '\nx = torch.ones(1).cuda()\ndef broken(:\n'
    finding = next(f for f in analyze(text, PORTABLE).findings if f.code == "NPU102")
    assert finding.message.endswith(" No portable fix: the file names `accelerator_device` and does not parse, "
                                    "so what binds it cannot be read.")
    assert [fix.style for fix in finding.fixes] == ["npu"]


def test_a_binding_the_file_wrote_further_down_gets_no_second_one() -> None:
    # only the line below the imports is the fixes' binding: one elsewhere may come after a use
    text = ('import torch\n\nSEED = 3\n'
            'accelerator_device = torch.accelerator.current_accelerator() or torch.device("cpu")\n'
            'y = torch.ones(1).cuda()\n')
    assert fixed(text) == text


def test_the_file_alias_for_torch() -> None:
    text = 'import torch as t\n\nt.cuda.manual_seed_all(3)\ny = t.ones(1).cuda()\n'
    assert fixed(text) == (
        'import torch as t\naccelerator_device = t.accelerator.current_accelerator() or t.device("cpu")\n\n'
        'if t.accelerator.is_available():\n    t.get_device_module(accelerator_device).manual_seed_all(3)\n'
        'y = t.ones(1).to(accelerator_device)\n')


def test_both_styles_are_offered_and_the_setting_orders_them() -> None:
    text = "import torch\n\ntorch.cuda.synchronize()\n"
    for style, first in (("npu", "npu"), ("portable", "portable")):
        finding = analyze(text, Settings(fix_style=style)).findings[0]
        assert [f.style for f in finding.fixes] == [first, "portable" if first == "npu" else "npu"]
    npu, portable = analyze(text, Settings()).findings[0].fixes
    assert npu.title == "Replace `torch.cuda.synchronize` with `torch.npu.synchronize`"
    assert portable.title == ("Fix portably: Replace `torch.cuda.synchronize` with `torch.accelerator.synchronize`, "
                              "run only where there is an accelerator (without one it raises, where "
                              "`torch.cuda.synchronize` did not)")


@pytest.mark.parametrize(("spec", "lowest"), [
    (">=2.1,<2.8", (2, 1)), ("==2.8.*", (2, 8)), ("=2.9", (2, 9)), ("~=2.7.0", (2, 7, 0)), ("<2.3", (0,)),
    ("!=2.0", (0,)), (">2.6", (2, 6)), ("==v2.10.1+cpu", (2, 10, 1)),
])
def test_lowest_allowed(spec: str, lowest: tuple[int, ...]) -> None:
    assert lowest_allowed(spec) == lowest


@pytest.mark.parametrize("ending", ["\r\n", "\r"])
def test_inserted_lines_end_as_the_files_lines_do(ending: str) -> None:
    text = f"import torch{ending}{ending}x = torch.ones(1).cuda(){ending}"
    assert fixed(text) == (f"import torch{ending}{BOUND.rstrip()}{ending}{ending}"
                           f"x = torch.ones(1).to(accelerator_device){ending}")
    text = f"import torch{ending}{ending}torch.cuda.synchronize(){ending}"
    assert fix_text(text, Settings(), "train.py", unsafe=True).text == (
        f"import torch{ending}import torch_npu{ending}{ending}torch.npu.synchronize(){ending}")


def test_a_text_too_long_to_parse_whole_that_names_the_device_gets_no_portable_fix() -> None:
    text = 'import torch\n' + BOUND + '\nx = torch.ones(1).cuda()\n' + "# padding\n" * (MAX_READ // 10)
    finding = next(f for f in analyze(text, PORTABLE).findings if f.code == "NPU102")
    assert finding.message.endswith(" No portable fix: the file names `accelerator_device` and is too long to read "
                                    "what binds it.")
    assert [fix.style for fix in finding.fixes] == ["npu"]
