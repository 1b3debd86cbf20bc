"""Find the layer (`--layers`): real torch and MindSpore on the CPU, real msprobe for the dumps."""

import csv
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lsp.runner import Emulation, Job, format_markdown, format_table

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="torch is not installed")

HERE = Path(__file__).resolve().parent
MODELS = (HERE / "layers_models.py").read_text()
SERVER = HERE.parents[1] / "server"
HAS_MSPROBE = importlib.util.find_spec("msprobe") is not None


def line_of(text: str, fragment: str, after: str = "") -> int:
    """1-based line of the first `fragment` after the first `after`."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i for i, line in enumerate(lines) if i >= start and fragment in line) + 1


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "layers_models.py"
    path.write_text(MODELS)

    def job(function: str, **options) -> Job:
        options.setdefault("timeout", 180)
        options.setdefault("layers", "module")
        return Job(path=str(path), function=function, **options)
    return job


def by_module(result):
    return {layer.module: layer for layer in result.layers}


def test_fp16_overflow_is_located_at_the_layer_that_overflows(pool, model):
    result = pool.run(model("fp16_overflow", target="emulate", emulation=Emulation(autocast="float16")))
    assert result.status == "error", result.message
    first = result.divergence
    assert (first.module, first.cls, first.call, first.verdict) == ("blocks.1.fc1", "Linear", 0, "ERROR")
    assert first.source["line"] == line_of(MODELS, "self.fc1 = nn.Linear(16, 32)")
    assert first.call_source["line"] == line_of(MODELS, "return self.fc2(self.act(self.fc1(x)))")
    layers = by_module(result)
    # downstream calls inherit the overflow: ERROR, but their inputs are ERROR too
    assert [(layers[m].verdict, layers[m].input_verdict) for m in ("blocks.1.act", "blocks.1.fc2", "head")] == \
        [("ERROR", "ERROR")] * 3
    # upstream calls are float16 rounding only
    assert all(layers[m].verdict != "ERROR" for m in ("blocks.0.fc1", "blocks.0.act", "blocks.0.fc2"))
    assert [layer.module for layer in result.layers] == ["", "blocks", "blocks.0", "blocks.0.fc1", "blocks.0.act",
                                                         "blocks.0.fc2", "blocks.1", "blocks.1.fc1", "blocks.1.act",
                                                         "blocks.1.fc2", "head"]


def test_an_all_inf_output_shows_no_metric_and_says_what_was_compared(pool, model):
    result = pool.run(model("fp16_overflow", target="emulate", emulation=Emulation(autocast="float16")))
    first = result.divergence
    assert first.metrics["compared"] == 0 and first.metrics["inf_target"] == first.metrics["nan_inf_mismatch"] > 0
    assert first.metrics["max_abs"] is None and first.metrics["cosine"] is None
    assert "no element finite on both sides" in first.reason
    row = next(line for line in format_table(result).split("\n") if "← first overflow, first divergence" in line)
    cells = re.split(r"\s{2,}", row.strip())
    assert cells[1:3] == ["blocks.1.fc1", "Linear"] and cells[6:8] == ["–", "–"]  # max abs, cosine
    row = next(line for line in format_markdown(result).split("\n") if "← first overflow, first divergence" in line)
    assert [c.strip() for c in row.split("|")][7:9] == ["–", "–"]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_tower_merely_in_low_precision_shows_no_divergence(pool, model, dtype):
    result = pool.run(model("tower", target="emulate", emulation=Emulation(autocast=dtype)))
    assert result.status == "passed", result.message
    assert (result.first_divergence, result.first_warning, result.first_overflow) == (None, None, None)
    assert result.benchmark == {"dtype": dtype, "device": "cpu"}
    norm = by_module(result)["blocks.0.2"]  # the first LayerNorm: what its dtype loses, not a defect
    assert (norm.verdict, norm.decided_by) == ("PASS", "benchmark ratio"), norm.reason
    assert set(norm.benchmark) >= {"max_abs", "max_rel", "mean_rel", "cosine", "rmse", "small_value_err_ratio",
                                   "rel_err_share", "compared"}
    assert f"no layer diverges ({len(result.layers)} calls compared)" in result.message


def test_a_tower_whose_fourth_linear_overflows_names_it_first_overflow_and_first_divergence(pool, model):
    result = pool.run(model("tower_overflow", target="emulate", emulation=Emulation(autocast="float16")))
    assert result.status == "error", result.message
    assert result.first_overflow == result.first_divergence
    first = result.overflow
    assert (first.module, first.cls, first.verdict, first.decided_by) == ("blocks.3.0", "Linear", "ERROR", "nan/inf")
    assert first.source["line"] == line_of(MODELS, "self.blocks = nn.Sequential(*[nn.Sequential(nn.Linear(64, 64)")
    assert first.call_source["line"] == line_of(MODELS, "return self.head(self.blocks(x))", after="class Tower")
    layers = by_module(result)
    assert all(layers[f"blocks.{b}.{i}"].verdict == "PASS" for b in range(3) for i in range(3))
    assert "first overflow and first divergence: blocks.3.0 (Linear) ERROR: nan inf mismatch" in result.message
    data = result.to_dict()
    assert data["first_overflow"] == data["first_divergence"]
    assert {k: data["first_overflow"][k] for k in ("module", "class", "verdict", "decided_by")} == \
        {"module": "blocks.3.0", "class": "Linear", "verdict": "ERROR", "decided_by": "nan/inf"}
    assert data["layers"][result.first_overflow]["overflow"] is True
    markdown = format_markdown(result)
    assert "ERROR ← first overflow, first divergence" in markdown
    # in the editor: one RUN002 mark on the Linear's construction line, its hover the layer table
    from ascend_lsp.engine.model import Severity
    from ascend_lsp.lsp.run_marks import RunMark, layer_hover
    from ascend_lsp.lsp.runs import layer_marks

    (mark,) = layer_marks(result, first.source["path"])
    assert mark.line == first.source["line"] - 1 and mark.severity == Severity.ERROR
    assert mark.summary.startswith("Run on emulate (emulated): first overflow and first divergence: blocks.3.0 "
                                   "(Linear) ERROR: nan inf mismatch")
    assert (mark.data["module"], mark.data["decided_by"]) == ("blocks.3.0", "nan/inf")
    run = RunMark("tower_overflow", Severity.ERROR, "", markdown, {}, (mark,))
    assert layer_hover({"tower_overflow": run}, mark.line) == markdown and layer_hover({"t": run}, 0) is None
    assert layer_marks(result, "elsewhere.py") == ()
    # the run's page: the overflow's mark links its construction line; the float16 side's own error is a band
    from ascend_lsp.lsp.run_view import run_view_html

    page = run_view_html(data, "n0nce")
    assert f'id="mark-overflow" data-path="{first.source["path"]}" data-line="{first.source["line"]}"' in page
    assert '<rect class="band"' in page


def test_fp16_saturation_on_910a_gives_65504_and_is_still_located(pool, model):
    result = pool.run(model("fp16_overflow", target="emulate", emulation=Emulation(autocast="float16", chip="910A")))
    first = result.divergence
    assert (first.module, first.verdict) == ("blocks.1.fc1", "ERROR"), result.message
    assert first.metrics["nan_inf_mismatch"] == 0 and first.metrics["compared"] > 0  # saturated, finite
    assert any("fp16 saturation mode" in note for note in result.notes)
    assert any(note.startswith("emulated: chip 910A: fp16 saturation mode") for note in result.notes)
    assert result.emulated


def test_saturation_maps_overflow_to_65504_and_nan_to_0():
    from ascend_lsp.runner.worker.emulation import saturate_fp16

    values = torch.tensor([1.0, float("inf"), float("-inf"), float("nan")], dtype=torch.float16)
    assert saturate_fp16(torch, torch.add, values).tolist() == [1.0, 65504.0, -65504.0, 0.0]
    assert saturate_fp16(torch, torch.add, values.float()) is not None  # other dtypes pass through


def test_bfloat16_on_a_chip_without_it_is_refused(pool, model):
    result = pool.run(model("faithful", target="emulate", emulation=Emulation(autocast="bfloat16", chip="310P")))
    assert result.status == "failed" and result.code == "bad-job"
    assert result.message == "chip 310P has no bfloat16: autocast to bfloat16 cannot be emulated there"


def test_a_faithful_run_reports_no_divergence(pool, model):
    result = pool.run(model("faithful", target="cpu"))
    assert result.status == "passed", result.message
    assert result.first_divergence is None and result.first_warning is None
    assert len(result.layers) == 11 and all(layer.verdict == "PASS" for layer in result.layers)
    assert all(layer.metrics["cosine"] == 1.0 for layer in result.layers)  # identical: decided by comparison
    data = result.to_dict()
    assert data["first_divergence"] is None and data["first_warning"] is None
    assert "no layer diverges (11 calls compared)" in result.message


@pytest.mark.parametrize("target", ["npu", "cuda"])
def test_layers_on_a_device_target(pool, model, target):
    result = pool.run(model("faithful", target=target))
    if result.code in ("missing-package", "no-device"):
        pytest.skip(f"no {target} here: {result.message}")
    assert result.ok, result.message
    assert [layer.module for layer in result.layers][:4] == ["", "blocks", "blocks.0", "blocks.0.fc1"]
    assert len(result.layers) == 11 and all(layer.problem is None for layer in result.layers)


def test_json_contract(pool, model):
    data = pool.run(model("fp16_overflow", target="emulate", emulation=Emulation(autocast="float16"))).to_dict()
    json.dumps(data)  # plain JSON
    fc1 = data["layers"][7]
    assert {k: fc1[k] for k in ("module", "class", "call", "verdict")} == \
        {"module": "blocks.1.fc1", "class": "Linear", "call": 0, "verdict": "ERROR"}
    assert set(fc1["metrics"]) >= {"max_abs", "cosine", "compared"} and fc1["source"]["path"].endswith(".py")
    assert {k: data["first_divergence"][k] for k in ("module", "class", "verdict")} == \
        {"module": "blocks.1.fc1", "class": "Linear", "verdict": "ERROR"}
    assert data["first_divergence"]["source"] == fc1["source"]


def test_api_level_records_torch_functions_inside_forward(pool, model):
    result = pool.run(model("fp16_overflow", target="emulate", emulation=Emulation(autocast="float16"),
                            layers="api"))
    first = result.divergence
    assert (first.module, first.kind, first.verdict) == ("Functional.linear", "api", "ERROR"), result.message
    parent = result.layers[first.parent]
    assert (parent.module, parent.kind) == ("blocks.1.fc1", "module")
    assert first.call == 2  # F.linear calls counted from 0: blocks.0.fc1, blocks.0.fc2, then blocks.1.fc1
    apis = [layer.module for layer in result.layers if layer.kind == "api"]
    assert apis.count("Functional.linear") == 5 and "Functional.relu" in apis


@pytest.mark.mindspore
@pytest.mark.parametrize("function, module, cls, built", [
    ("port_slope", "act", "LeakyReLU", "self.act = msnn.LeakyReLU() if slope is None"),
    ("pooled", "pool", "MaxPool2d", "self.pool = msnn.MaxPool2d(2)"),
])
def test_a_mindspore_port_with_a_wrong_default_is_located_at_that_cell(pool, model, function, module, cls, built):
    pytest.importorskip("mindspore", reason="mindspore is not installed")
    result = pool.run(model(function, target="mindspore"))
    assert result.status == "error", result.message
    first = result.divergence
    assert (first.module, first.cls, first.verdict) == (module, cls, "ERROR"), result.message
    assert first.source["line"] == line_of(MODELS, built)  # the port's line, where the default is
    assert first.input_verdict == "PASS"


@pytest.mark.mindspore
def test_a_faithful_mindspore_port_reports_no_divergence(pool, model):
    pytest.importorskip("mindspore", reason="mindspore is not installed")
    result = pool.run(model("port", target="mindspore"))
    assert result.status == "passed", result.message
    assert result.first_divergence is None
    assert [(layer.module, layer.cls, layer.target_class) for layer in result.layers] == [
        ("", "Port", "PortMS"), ("fc1", "Linear", "Dense"), ("act", "LeakyReLU", None),
        ("norm", "LayerNorm", None), ("fc2", "Linear", "Dense")]


def test_the_dump_is_read_back_to_the_same_answer(pool, model, tmp_path):
    dump = tmp_path / "dump"
    run = pool.run(model("fp16_overflow", target="emulate", emulation=Emulation(autocast="float16"), dump=str(dump)))
    assert (dump / "bench" / "step0" / "rank" / "dump.json").is_file()
    assert (dump / "npu" / "step0" / "rank" / "dump_tensor_data" / "Module.head.Linear.forward.0.output.0.pt").is_file()
    source = str(tmp_path / "layers_models.py")
    back = pool.run(Job(path=source, function="compare-dumps", target="dumps", timeout=180,
                        dumps=(str(dump / "bench"), str(dump / "npu"))))
    assert back.status == "error", back.message
    mine, theirs = run.divergence, back.divergence
    assert (theirs.module, theirs.cls, theirs.verdict, theirs.reason) == \
        (mine.module, mine.cls, mine.verdict, mine.reason)
    assert theirs.source == {"path": source, "line": mine.source["line"]}
    assert theirs.call_source["line"] == mine.call_source["line"]
    # every call but the root (msprobe does not dump it) comes back with the same verdict
    assert [(layer.module, layer.verdict) for layer in back.layers] == \
        [(layer.module, layer.verdict) for layer in run.layers if layer.module]


def test_compare_dumps_names_a_missing_dump(pool, tmp_path):
    result = pool.run(Job(path="", function="compare-dumps", target="dumps", dumps=(str(tmp_path), str(tmp_path))))
    assert result.status == "failed" and result.code == "bad-dump"
    assert result.message == f"no dump.json under {tmp_path}"


def test_a_statistics_only_dump_is_refused_with_a_reason(pool, tmp_path):
    from ascend_lsp.runner.worker.dumps import write_dump
    from ascend_lsp.runner.worker.layer_calls import Layers, patch_module_construction
    from ascend_lsp.runner.worker.patches import Patches

    layers = Layers(torch, "model.py")
    with Patches() as patches:
        patch_module_construction(torch.nn.Module, patches, layers)
        net = torch.nn.Sequential(torch.nn.Linear(2, 2))
    index = layers.enter("module", net[0], "Linear", (torch.ones(1, 2),), {})
    layers.exit(index, net[0](torch.ones(1, 2)))
    layers.name_modules([net])
    for side in ("bench", "npu"):
        write_dump(torch, layers, str(tmp_path / side), tensors=False)
    dumped = json.loads((tmp_path / "bench" / "step0" / "rank" / "dump.json").read_text())
    assert list(dumped["data"]) == ["Module.0.Linear.forward.0"] and dumped["task"] == "statistics"
    result = pool.run(Job(path="", function="compare-dumps", target="dumps",
                          dumps=(str(tmp_path / "bench"), str(tmp_path / "npu"))))
    assert result.status == "failed" and result.code == "bad-dump"
    assert result.message.startswith("this dump holds statistics only")


def msprobe(*args, cwd=None):
    code = "import sys; from msprobe.msprobe import main; sys.argv[0] = 'msprobe'; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600, cwd=cwd)


@pytest.mark.skipif(not HAS_MSPROBE, reason="msprobe (PyPI mindstudio-probe) is not installed")
def test_msprobe_compare_reads_our_dump(pool, model, tmp_path):
    dump = tmp_path / "dump"
    run = pool.run(model("fp16_overflow", target="emulate", emulation=Emulation(autocast="float16"), dump=str(dump)))
    out = tmp_path / "out"
    out.mkdir()
    done = msprobe("compare", "--target_path", str(dump / "npu" / "step0"), "--golden_path",
                   str(dump / "bench" / "step0"), "--output_path", str(out))
    results = list(out.glob("compare_result_*.csv"))
    assert results, done.stdout[-3000:] + done.stderr[-3000:]
    with open(results[0], newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(row["Bench Name"] == row["NPU Name"] for row in rows)  # every row matched
    flagged = {row["NPU Name"] for row in rows if "nan/inf" in row["Err_message"]}
    ours = {f"Module.{layer.module}.{layer.cls}.forward.{layer.call}.output.0"
            for layer in run.layers if layer.module and layer.metrics.get("nan_inf_mismatch")}
    assert {name for name in flagged if ".output." in name} == ours
    finite = {row["NPU Name"]: float(row["MaxAbsErr"]) for row in rows if row["MaxAbsErr"] not in ("N/A", "")}
    for layer in run.layers:
        name = f"Module.{layer.module}.{layer.cls}.forward.{layer.call}.output.0"
        if name in finite:
            assert finite[name] == pytest.approx(layer.metrics["max_abs"], rel=1e-6, abs=1e-9), name


@pytest.mark.skipif(not HAS_MSPROBE, reason="msprobe (PyPI mindstudio-probe) is not installed")
def test_compare_dumps_reads_a_dump_msprobe_took(pool, tmp_path):
    script = HERE / "msprobe_dump.py"
    for name, extra in (("bench", []), ("npu", ["--perturb"])):
        done = subprocess.run([sys.executable, str(script), str(tmp_path / name), *extra], capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    assert len(list((tmp_path / "bench").glob("step0/proc*/dump.json"))) == 1  # msprobe's own layout
    result = pool.run(Job(path=str(script), function="compare-dumps", target="dumps", timeout=180,
                          dumps=(str(tmp_path / "bench"), str(tmp_path / "npu"))))
    assert result.status == "error", result.message
    assert [(layer.module, layer.cls, layer.verdict) for layer in result.layers] == \
        [("fc1", "Linear", "PASS"), ("act", "ReLU", "PASS"), ("fc2", "Linear", "ERROR")]
    text = script.read_text()
    first = result.divergence
    assert first.module == "fc2" and first.input_verdict == "PASS"
    assert first.source == {"path": str(script), "line": line_of(text, "self.fc2 = nn.Linear(16, 4)")}
    assert first.call_source["line"] == line_of(text, "return self.fc2(self.act(self.fc1(x)))")


def test_cli_layers_json_and_compare_dumps(tmp_path):
    path = tmp_path / "layers_models.py"
    path.write_text(MODELS)
    env = {**os.environ, "PYTHONPATH": str(SERVER)}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "ascend_lsp.cli.main", *args], capture_output=True, text=True,
                              env=env, timeout=600)
    done = cli("run", f"{path}::fp16_overflow", "--target", "emulate", "--autocast", "float16", "--layers", "--json",
               "--dump", str(tmp_path / "dump"))
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["first_divergence"]["module"] == "blocks.1.fc1"
    done = cli("compare-dumps", str(tmp_path / "dump" / "bench"), str(tmp_path / "dump" / "npu"), "--source", str(path))
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("Compare msprobe dumps: ERROR: first overflow and first divergence: blocks.1.fc1 "
                                  "(Linear) ERROR")
    assert cli("compare-dumps", str(tmp_path / "nothing"), str(tmp_path)).returncode == 2


def test_a_dump_json_that_is_not_msprobes_is_refused_with_a_reason(pool, tmp_path):
    for side in ("bench", "npu"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "dump.json").write_text('["not", "a", "dump"]')
    result = pool.run(Job(path="", function="compare-dumps", target="dumps",
                          dumps=(str(tmp_path / "bench"), str(tmp_path / "npu"))))
    assert (result.status, result.code) == ("failed", "bad-dump")
    assert result.message == f"{tmp_path / 'bench' / 'dump.json'} is not an msprobe dump.json (no \"data\" object)"
