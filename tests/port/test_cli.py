"""`lsp-check port`, `lsp-check convert-weights` and `lsp-check run --target mindspore` with a port,
through the real command line."""

from __future__ import annotations

import json

import pytest

from ascend_lsp.cli.main import main

from .harness import load_module
from .models import MODELS, model_source

NANOGPT = next(m for m in MODELS if m.name == "nanogpt")

SMALL = '''import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 8 * 8, 5), nn.LayerNorm(5))

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.conv(x))))


def predict():
    torch.manual_seed(0)
    net = Net()
    net.eval()
    with torch.no_grad():
        return net(torch.randn(2, 3, 8, 8))
'''


def test_port_writes_beside_the_source_and_exits_0_when_all_converted(tmp_path, capsys):
    source = tmp_path / "small.py"
    source.write_text(SMALL, encoding="utf-8")
    assert main(["port", str(source), "--to", "mindspore"]) == 0
    assert (tmp_path / "small_mindspore.py").read_text(encoding="utf-8").startswith("import mindspore\n")
    out = capsys.readouterr().out
    assert out.startswith(f"{source} → {tmp_path / 'small_mindspore.py'}: 15 converted, 0 need a person, "
                          "0 unsupported (100.0% converted; torch API calls: 9 of 9 converted, 100.0%)")


def test_port_exits_1_and_reports_json_when_something_needs_a_person(tmp_path, capsys):
    source, out_file, report = tmp_path / "gpt.py", tmp_path / "gpt_ms.py", tmp_path / "report.json"
    source.write_text(model_source(NANOGPT), encoding="utf-8")
    code = main(["port", str(source), "-o", str(out_file), "--format", "json", "--report", str(report)])
    assert code == 1
    data = json.loads(report.read_text(encoding="utf-8"))
    assert (data["converted"], data["manual"], data["unsupported"], data["rate"]) == (92, 2, 2, 0.9583)
    [file] = data["files"]
    assert file["output"] == str(out_file)
    assert [(i["line"], i["code"]) for i in file["items"] if i["status"] != "converted"] == [
        (305, "MS301"), (310, "MS301"), (332, "MS302"), (335, "MS302")]
    assert "# MS302 port: `torch.optim.AdamW` has no MindSpore counterpart" in out_file.read_text(encoding="utf-8")


def test_port_takes_several_files_each_beside_itself(tmp_path, capsys):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(SMALL, encoding="utf-8")
    second.write_text(model_source(NANOGPT), encoding="utf-8")
    assert main(["port", str(first), str(second)]) == 1
    out = capsys.readouterr().out.split("\n")
    assert out[0].endswith("15 converted, 0 need a person, 0 unsupported (100.0% converted; torch API calls: 9 of 9 "
                           "converted, 100.0%)")
    assert out[1].endswith("92 converted, 2 need a person, 2 unsupported (95.8% converted; torch API calls: 34 of "
                           "35 converted, 97.1%)")
    assert (tmp_path / "a_mindspore.py").is_file() and (tmp_path / "b_mindspore.py").is_file()
    assert main(["port", str(first), str(second), "-o", str(tmp_path / "x.py")]) == 2


def test_port_exits_2_on_a_file_that_does_not_parse_and_never_overwrites_the_source(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\ndef f(:\n", encoding="utf-8")
    assert main(["port", str(broken)]) == 2
    assert "does not parse" in capsys.readouterr().err
    assert not (tmp_path / "broken_mindspore.py").exists()
    source = tmp_path / "small.py"
    source.write_text(SMALL, encoding="utf-8")
    assert main(["port", str(source), "-o", str(source)]) == 2
    assert source.read_text(encoding="utf-8") == SMALL




@pytest.mark.torch
@pytest.mark.mindspore
def test_convert_weights_reads_a_checkpoint_dict_and_loads_strictly(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    mindspore = pytest.importorskip("mindspore")
    source = tmp_path / "small.py"
    source.write_text(SMALL, encoding="utf-8")
    net = load_module(source, "small_torch").Net()
    torch.save({"epoch": 3, "model_state_dict": net.state_dict()}, tmp_path / "small.pth")
    assert main(["port", str(source)]) == 0
    code = main(["convert-weights", str(tmp_path / "small.pth"), "-o", str(tmp_path / "small.ckpt"),
                 "--source", str(source), "--json"])
    report = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert code == 0 and report["unmapped"] == []
    assert [d["torch"] for d in report["dropped"]] == ["bn.num_batches_tracked"]
    assert {(r["torch"], r["mindspore"]) for r in report["renamed"]} == {
        ("bn.weight", "bn.gamma"), ("bn.bias", "bn.beta"), ("bn.running_mean", "bn.moving_mean"),
        ("bn.running_var", "bn.moving_variance"), ("head.2.weight", "head.2.gamma"), ("head.2.bias", "head.2.beta")}
    ported = load_module(tmp_path / "small_mindspore.py", "small_ms").Net()
    checkpoint = mindspore.load_checkpoint(str(tmp_path / "small.ckpt"))
    assert mindspore.load_param_into_net(ported, checkpoint, strict_load=True) == ([], [])


@pytest.mark.torch
@pytest.mark.mindspore
def test_convert_weights_writes_a_tied_tensor_once(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    mindspore = pytest.importorskip("mindspore")
    source = tmp_path / "tied.py"
    source.write_text('''import torch.nn as nn


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = nn.ModuleDict(dict(wte=nn.Embedding(8, 4)))
        self.head = nn.Linear(4, 8, bias=False)
        self.parts.wte.weight = self.head.weight
''', encoding="utf-8")
    torch.save(load_module(source, "tied_torch").LM().state_dict(), tmp_path / "tied.pth")
    assert main(["port", str(source)]) == 0
    capsys.readouterr()
    assert main(["convert-weights", str(tmp_path / "tied.pth"), "-o", str(tmp_path / "tied.ckpt"),
                 "--source", str(source), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dropped"] == [{"torch": "head.weight", "why": "tied to parts.wte.weight (the source ties them): one "
                                                                 "MindSpore Parameter, named by its first path"}]
    ported = load_module(tmp_path / "tied_mindspore.py", "tied_ms").LM()
    checkpoint = mindspore.load_checkpoint(str(tmp_path / "tied.ckpt"))
    assert mindspore.load_param_into_net(ported, checkpoint, strict_load=True) == ([], [])


@pytest.mark.torch
@pytest.mark.mindspore
def test_convert_weights_exits_1_on_a_tensor_it_cannot_name(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    source = tmp_path / "mixed.py"
    source.write_text('''import torch.nn as nn


def build(kind):
    return nn.Embedding(4, 4) if kind else nn.Linear(4, 4, bias=False)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([build(kind) for kind in (0, 1)])
''', encoding="utf-8")
    torch.save(load_module(source, "mixed_torch").Net().state_dict(), tmp_path / "mixed.pth")
    code = main(["convert-weights", str(tmp_path / "mixed.pth"), "-o", str(tmp_path / "mixed.ckpt"),
                 "--source", str(source)])
    out = capsys.readouterr().out
    assert code == 1
    assert "NOT MAPPED layers.0.weight" in out and "NOT MAPPED layers.1.weight" in out


def test_convert_weights_exits_2_on_a_file_without_a_state_dict(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"not a checkpoint")
    source = tmp_path / "small.py"
    source.write_text(SMALL, encoding="utf-8")
    assert main(["convert-weights", str(bad), "-o", str(tmp_path / "x.ckpt"), "--source", str(source)]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert not (tmp_path / "x.ckpt").exists()


@pytest.mark.torch
@pytest.mark.mindspore
def test_run_pairs_a_function_with_its_port(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    source = tmp_path / "small.py"
    source.write_text(SMALL, encoding="utf-8")
    assert main(["port", str(source)]) == 0
    capsys.readouterr()
    assert main(["run", f"{source}::predict", "--target", "mindspore", "--timeout", "240"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Run on mindspore predict: PASS")
    assert "loaded 10 torch tensors into Net" in out
    moved = tmp_path / "elsewhere.py"
    (tmp_path / "small_mindspore.py").rename(moved)
    assert main(["run", f"{source}::predict", "--target", "mindspore"]) == 2  # no port beside it, no pair
    assert main(["run", f"{source}::predict", "--target", "mindspore", "--port", str(moved),
                 "--timeout", "240"]) == 0


DIVERGES = '''import torch
from torch import nn


class Scale(nn.Module):
    def forward(self, x):
        return x * (1 + 0.5 * torch.rand_like(x))  # noise: MindSpore's generator draws other numbers than torch's


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.scale = Scale()
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        return self.out(self.scale(self.fc(x)))
'''


@pytest.mark.torch
@pytest.mark.mindspore
def test_port_verify_converts_loads_runs_and_grades_in_one_command(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    source, port = tmp_path / "small.py", tmp_path / "small_ms.py"
    source.write_text(SMALL, encoding="utf-8")
    assert main(["port", str(source), "-o", str(port), "--verify", "Net()", "--input", "randn:2,3,8,8",
                 "--format", "json"]) == 0
    [file] = json.loads(capsys.readouterr().out)["files"]
    verify = file["verify"]
    assert (verify["stage"], verify["reason"], verify["checkpoint"]) == ("PASS", "", str(tmp_path / "small_ms.ckpt"))
    assert [o["verdict"] for o in verify["outputs"]] == ["PASS"]
    assert (verify["weights"]["tensors"], verify["weights"]["unmapped"]) == (10, [])
    assert file["calls"] == {"converted": 9, "total": 9}


def test_port_verify_draws_what_the_model_leaves_uninitialised(tmp_path, capsys):
    """`nn.Parameter(torch.empty(…))` that nothing fills (Whisper's positional embedding) would hold whatever
    memory held: the reference gets a seeded draw, the same in every run."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    from ascend_lsp.port.verify import torch_reference

    source = tmp_path / "empty.py"
    source.write_text("import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.table = nn.Parameter(torch.empty(64, 8))\n"
                      "        self.register_buffer('mask', torch.empty(4, 4).fill_(-1.0).triu_(1))\n\n"
                      "    def forward(self, x):\n        return x @ self.table[:8] + self.mask.sum()\n", encoding="utf-8")
    x = pytest.importorskip("numpy").ones((2, 8), "float32")
    first = torch_reference(torch, source, "Net()", [x])[1]
    again = torch_reference(torch, source, "Net()", [x])[1]
    assert torch.equal(first["table"], again["table"]) and 0.015 < float(first["table"].std()) < 0.025
    assert torch.equal(first["mask"], torch.empty(4, 4).fill_(-1.0).triu_(1))  # what the model writes stays
    assert main(["port", str(source), "-o", str(tmp_path / "empty_ms.py"), "--verify", "Net()", "--input",
                 "randn:2,8"]) == 0
    assert "PASS" in capsys.readouterr().out


@pytest.mark.torch
@pytest.mark.mindspore
def test_port_verify_names_the_first_diverging_layer(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    source, port = tmp_path / "net.py", tmp_path / "net_ms.py"
    source.write_text(DIVERGES, encoding="utf-8")
    assert main(["port", str(source), "-o", str(port), "--verify", "Net()", "--input", "randn:2,8"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("verify Net(): stops after `runs` (ported → imports → builds → loads → runs → PASS): "
                               "out ERROR: ")
    assert lines[2] == f"  weights → {tmp_path / 'net_ms.ckpt'}: 4 tensors, 0 renamed or reshaped, 0 dropped, " \
                       "0 could not be mapped"
    assert lines[4].startswith("  first diverging layer: scale (Scale, built at line 14): ")


@pytest.mark.parametrize("argv,message", [
    (["--verify", "Net()"], "--verify EXPR checks the port of a single source and needs at least one --input"),
    (["--input", "randn:2,8"], "--verify EXPR checks the port of a single source and needs at least one --input"),
    (["--verify", "Net()", "--input", "randn:2,x"], "--input 'randn:2,x': expected randn:D1,D2,... (float32 "
                                                    "normal) or randint:HIGH:D1,D2,... (int64 in [0, HIGH))"),
])
def test_port_verify_refuses_what_it_cannot_run(tmp_path, capsys, argv, message):
    source = tmp_path / "net.py"
    source.write_text(DIVERGES, encoding="utf-8")
    assert main(["port", str(source), *argv]) == 2
    assert capsys.readouterr().err == f"error: {message}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.py"]
