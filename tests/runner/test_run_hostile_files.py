"""The runner on what a repository may hold: a FIFO where the file should be, and modules
named with characters a file name cannot have (a ModuleDict key "enc/0")."""

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_lsp.runner import Job

HERE = Path(__file__).resolve().parent
SERVER = HERE.parents[1] / "server"
HAS_MSPROBE = importlib.util.find_spec("msprobe") is not None


def test_run_on_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "model.py"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "ascend_lsp.runner.run_commands", f"{fifo}::f", "--target", "cpu"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SERVER)}, timeout=30)
    assert done.returncode == 2
    assert done.stdout.startswith(f"Run on cpu f: failed: {fifo}: not a regular file (a FIFO); only files are read")


SLASHED = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.parts = nn.ModuleDict({"enc/0": nn.Linear(4, 4), "dec 1": nn.Linear(4, 2)})

    def forward(self, x):
        return self.parts["dec 1"](self.parts["enc/0"](x))


def slashed():
    torch.manual_seed(0)
    return Net()(torch.rand(3, 4))
'''


def dump_a_run(pool, tmp_path) -> tuple[Path, Path]:
    """SLASHED's file, and the dump of a run of it."""
    pytest.importorskip("torch", reason="torch is not installed")
    source = tmp_path / "slashed.py"
    source.write_text(SLASHED, encoding="utf-8")
    dump = tmp_path / "dump"
    run = pool.run(Job(path=str(source), function="slashed", target="cpu", timeout=180, layers="module",
                       dump=str(dump)))
    assert run.status == "passed", run.message
    return source, dump


@pytest.mark.torch
def test_modules_named_with_a_slash_are_dumped_and_compared(pool, tmp_path):
    source, dump = dump_a_run(pool, tmp_path)
    rank = dump / "npu" / "step0" / "rank"
    rows = json.loads((rank / "dump.json").read_text(encoding="utf-8"))["data"]
    # the rows keep msprobe's names; the files have names a folder can hold
    assert sorted(rows) == ["Module.parts.dec 1.Linear.forward.0", "Module.parts.enc/0.Linear.forward.0"]
    files = {rows[name]["output"][0]["data_name"] for name in rows}
    assert all("/" not in f and " " not in f and (rank / "dump_tensor_data" / f).is_file() for f in files), files
    assert sorted(p.name for p in (rank / "dump_tensor_data").iterdir() if p.is_dir()) == []
    back = pool.run(Job(path=str(source), function="compare-dumps", target="dumps", timeout=180,
                        dumps=(str(dump / "bench"), str(dump / "npu"))))
    assert back.status == "passed", back.message
    assert [(layer.module, layer.cls, layer.verdict) for layer in back.layers] == \
        [("parts.enc/0", "Linear", "PASS"), ("parts.dec 1", "Linear", "PASS")]
    if HAS_MSPROBE:
        out = tmp_path / "out"
        out.mkdir()
        code = "import sys; from msprobe.msprobe import main; sys.argv[0] = 'msprobe'; sys.exit(main())"
        done = subprocess.run([sys.executable, "-c", code, "compare", "--target_path", str(dump / "npu" / "step0"),
                               "--golden_path", str(dump / "bench" / "step0"), "--output_path", str(out)],
                              capture_output=True, text=True, timeout=600)
        results = list(out.glob("compare_result_*.csv"))
        assert results, done.stdout[-3000:] + done.stderr[-3000:]
        with open(results[0], newline="") as f:
            compared = {row["NPU Name"]: row for row in csv.DictReader(f)}
        # msprobe names a compared tensor after its file: both sides' files have the same names
        assert sorted(compared) == sorted(f.removesuffix(".pt") for name in rows for side in ("input_args", "output")
                                          for f in (t["data_name"] for t in rows[name][side]))
        assert all(row["Bench Name"] == name for name, row in compared.items())


@pytest.mark.torch
def test_compare_dumps_reads_nothing_outside_the_dump(pool, tmp_path):
    source, dump = dump_a_run(pool, tmp_path)
    rank = dump / "npu" / "step0" / "rank"
    dumped = json.loads((rank / "dump.json").read_text(encoding="utf-8"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dumped["dump_data_dir"] = str(elsewhere)  # not this dump's folder: not used
    (rank / "dump.json").write_text(json.dumps(dumped), encoding="utf-8")
    back = pool.run(Job(path="", function="compare-dumps", target="dumps", timeout=180,
                        dumps=(str(dump / "bench"), str(dump / "npu"))))
    assert back.status == "passed", back.message
    row = dumped["data"]["Module.parts.enc/0.Linear.forward.0"]
    row["output"][0]["data_name"] = "../../../../secret.pt"
    (rank / "dump.json").write_text(json.dumps(dumped), encoding="utf-8")
    back = pool.run(Job(path="", function="compare-dumps", target="dumps", timeout=180,
                        dumps=(str(dump / "bench"), str(dump / "npu"))))
    assert (back.status, back.code) == ("failed", "bad-dump")
    assert back.message == f"data_name '../../../../secret.pt' points outside the dump's {rank / 'dump_tensor_data'}"
