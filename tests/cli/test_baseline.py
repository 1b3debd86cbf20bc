"""Baselines: only new findings fail; keys survive lines moving; fixed findings drop out."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import lsp_check

BASE = ".lsp-check-baseline.json"
TRAIN = "import torch\n\nx = torch.ones(2).cuda()\ny = torch.ones(2).cuda()\ntorch.cuda.synchronize()\n"


def concise(proc) -> list[str]:
    return [line for line in proc.stdout.splitlines() if ": NPU" in line or ": E999" in line]


def test_only_new_findings_fail_and_keys_survive_inserted_lines(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "train.py").write_text(TRAIN)
    (src / "other.py").write_text("import os\n\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n")
    wrote = lsp_check(tmp_path, "src", "--write-baseline", BASE)
    assert wrote.returncode == 0 and "Wrote 4 findings to the baseline" in wrote.stderr
    data = json.loads((tmp_path / BASE).read_text())
    assert data["lsp-check-baseline"] == 1
    assert data["findings"][1] == {"file": "src/train.py", "code": "NPU102", "source": "x = torch.ones(2).cuda()",
                                   "count": 1}
    clean = lsp_check(tmp_path, "src", "--baseline", BASE)
    assert clean.returncode == 0 and "All checks passed. 4 findings accepted by the baseline." in clean.stdout

    # Lines inserted above and re-indented code: nothing new.
    (src / "train.py").write_text('"""Docs."""\n# comment\n' + TRAIN.replace("y = ", "y  =  "))
    assert lsp_check(tmp_path, "src", "--baseline", BASE).returncode == 0
    # A third copy of a known line is new; so is a new kind of finding.
    (src / "train.py").write_text(TRAIN + "z = torch.ones(2).cuda()\nx = torch.ones(2).cuda()\n")
    new = lsp_check(tmp_path, "src", "--baseline", BASE, "--output-format", "concise")
    assert new.returncode == 1
    assert concise(new) == ["src/train.py:6:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`.",
                            "src/train.py:7:19: NPU102 [*] `.cuda()` is CUDA-only. Use `.npu()`."]
    assert "Found 2 findings in 1 file." in new.stdout


def test_rewriting_drops_fixed_findings_and_keeps_unchecked_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(TRAIN)
    (tmp_path / "b.py").write_text(TRAIN)
    (tmp_path / "gone.py").write_text(TRAIN)
    lsp_check(tmp_path, ".", "--write-baseline", BASE)
    assert lsp_check(tmp_path, "a.py", "--fix").returncode == 0
    (tmp_path / "gone.py").unlink()
    stale = lsp_check(tmp_path, ".", "--baseline", BASE)
    assert stale.returncode == 0
    assert "note: 3 baseline entries no longer occur (fixed?)" in stale.stderr  # a.py's; gone.py is not checked
    lsp_check(tmp_path, "a.py", "--write-baseline", BASE)  # only a.py checked: b.py's entries stay, gone.py's go
    files = {entry["file"] for entry in json.loads((tmp_path / BASE).read_text())["findings"]}
    assert files == {"b.py"}
    (tmp_path / "b.py").write_text("import torch\n")
    lsp_check(tmp_path, ".", "--write-baseline", BASE)
    assert json.loads((tmp_path / BASE).read_text())["findings"] == []


def test_paths_are_relative_to_the_baseline_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(TRAIN)
    lsp_check(tmp_path, "pkg", "--write-baseline", "ci/baseline.json")
    assert {e["file"] for e in json.loads((tmp_path / "ci" / "baseline.json").read_text())["findings"]} == \
        {"../pkg/m.py"}  # so the same baseline works from any working directory
    assert lsp_check(tmp_path / "pkg", "m.py", "--baseline", "../ci/baseline.json").returncode == 0


def test_a_bad_baseline_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(TRAIN)
    missing = lsp_check(tmp_path, "a.py", "--baseline", "nope.json")
    assert missing.returncode == 2 and "nope.json: cannot read the baseline" in missing.stderr
    (tmp_path / "bad.json").write_text('{"findings": []}')
    bad = lsp_check(tmp_path, "a.py", "--baseline", "bad.json")
    assert bad.returncode == 2 and "not an lsp-check baseline" in bad.stderr and "Traceback" not in bad.stderr
    both = lsp_check(tmp_path, "a.py", "--baseline", "bad.json", "--write-baseline", "x.json")
    assert both.returncode == 2 and "either --baseline or --write-baseline" in both.stderr


def test_baseline_filters_every_output_format(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(TRAIN)
    lsp_check(tmp_path, "a.py", "--write-baseline", BASE)
    (tmp_path / "a.py").write_text(TRAIN + "w = torch.ones(1).cuda()\n")
    for fmt in ("json", "gitlab"):
        out = json.loads(lsp_check(tmp_path, "a.py", "--baseline", BASE, "--output-format", fmt).stdout)
        assert len(out) == 1
    sarif = json.loads(lsp_check(tmp_path, "a.py", "--baseline", BASE, "--output-format", "sarif").stdout)
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in sarif["runs"][0]["results"]] == [6]
