"""`lsp-check report`: every status counted as defined, the formats agreeing with the JSON,
and the HTML rendered in a real headless Chromium showing the JSON's numbers."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ascend_lsp.cli.report import effort
from ascend_lsp.cli.report_terms import STATUS_KEYS
from ascend_lsp.engine.analyzer import tables_for
from ascend_lsp.engine.config import Settings
from ascend_lsp.rules import RULE_SET

from .conftest import lsp_check

CRAFTED = """\
import torch
import flash_attn
from torch.cuda.amp import autocast

x = torch.ones(2).cuda()
torch.cuda.synchronize()
torch.backends.cuda.matmul.allow_tf32 = True
batched = torch.func.vmap(len)
y = torch.polar(x, x)
p = torch.nn.Parameter(x)
w: torch.Tensor = torch.zeros(1, dtype=torch.float32)
out = flash_attn.flash_attn_func(x)
with autocast():
    pass
q = torch.ones(1).cuda()  # noqa: NPU102
"""


def report(cwd: Path, *args: str) -> dict:
    proc = lsp_check(cwd, "report", *args, "--format", "json", "--exit-zero")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_each_reference_gets_one_status(tmp_path: Path) -> None:
    (tmp_path / "crafted.py").write_text(CRAFTED)
    data = report(tmp_path, "crafted.py")
    row = data["files"][0]
    assert {k: row[k] for k in ("references", *STATUS_KEYS, "findings", "effort")} == {
        "references": 13,
        "supported": 3,  # torch.ones twice, torch.zeros (the annotation and the dtype are not APIs)
        "safe": 3,  # the autocast import, .cuda(), torch.cuda.synchronize
        "unsafe": 1,  # allow_tf32 → allow_hf32
        "manual": 1,  # torch.polar falls back to the CPU
        "unsupported": 3,  # import flash_attn, the flash_attn_func call (reported at each call), torch.func.vmap on A2
        "unknown": 1,  # torch.nn.Parameter is not in the support list
        "other": 1,  # autocast: flagged at its import
        "findings": 8,
        "effort": "high",
    }
    assert data["unknown_apis"] == [{"api": "torch.nn.Parameter", "count": 1}]
    assert data["top_unsupported"] == [{"api": "flash_attn", "code": "NPU302", "count": 1},
                                       {"api": "torch.func.vmap", "code": "NPU201", "count": 1},
                                       {"api": "flash_attn.flash_attn_func", "code": "NPU302", "count": 1}]
    assert {"code": "NPU103", "name": "torch-cuda-api", "count": 2, "safe": 2, "unsafe": 0} in data["top_rules"]
    assert data["mindspore"] is None
    assert "high: 3 or more unsupported" in data["effort_rule"]


def test_a_finding_lowered_to_info_is_manual_not_unsupported(tmp_path: Path) -> None:
    # the list marks nn.RNN ✘, but torch_npu 2.13.0 registers a kernel for every operator it runs: info
    (tmp_path / "a.py").write_text("import torch\n\nrnn = torch.nn.RNN(2, 2)\nbatched = torch.func.vmap(len)\n")
    data = report(tmp_path, "a.py")
    assert {k: data["totals"][k] for k in ("manual", "unsupported")} == {"manual": 1, "unsupported": 1}
    assert data["top_unsupported"] == [{"api": "torch.func.vmap", "code": "NPU201", "count": 1}]


def test_the_chip_decides_what_is_supported(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import torch\n\nbucket = torch.distributed.GradBucket\n")
    assert report(tmp_path, "a.py")["totals"]["supported"] == 1
    on_950 = report(tmp_path, "a.py", "--chip", "950DT")["totals"]
    assert on_950["supported"] == 0 and on_950["unsupported"] == 1


def test_effort_buckets() -> None:
    assert effort(Counter(), 0) == "none"
    assert effort(Counter(safe=40), 40) == "low"
    assert effort(Counter(manual=2, unsafe=1), 3) == "low"
    assert effort(Counter(manual=4), 4) == "medium"
    assert effort(Counter(unsupported=1), 1) == "medium"
    assert effort(Counter(unsupported=3), 3) == "high"
    assert effort(Counter(manual=10, unsafe=6), 16) == "high"


def test_a_syntax_error_is_a_finding_but_not_a_reference(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import torch\nx = torch.ones(2).cuda()\ndef f(:\n")
    row = report(tmp_path, "broken.py")["files"][0]
    assert row["findings"] == 2 and row["references"] == 2 and row["safe"] == 1 and row["supported"] == 1


def test_formats_agree_and_exit_codes_follow_check(repo: Path) -> None:
    proc = lsp_check(repo, "report", "src", "-o", "out/report.json")
    assert proc.returncode == 1 and "Wrote the json report to out/report.json" in proc.stderr
    data = json.loads((repo / "out" / "report.json").read_text())
    totals = data["totals"]
    assert totals["files"] == 6 and totals["files_with_findings"] == 4
    assert totals["references"] == sum(totals[k] for k in STATUS_KEYS)
    assert totals["references"] == sum(f["references"] for f in data["files"])
    assert sum(totals["effort"].values()) == 6 and totals["effort"]["none"] == 2

    assert lsp_check(repo, "report", "src", "-o", "out/report.csv", "--exit-zero").returncode == 0
    rows = list(csv.DictReader(io.StringIO((repo / "out" / "report.csv").read_text())))
    assert [r["path"] for r in rows[:-1]] == [f["path"] for f in data["files"]]
    assert rows[-1]["path"] == "TOTAL"
    assert {k: int(rows[-1][k]) for k in ("references", *STATUS_KEYS, "findings")} == \
        {k: totals[k] for k in ("references", *STATUS_KEYS, "findings")}

    lsp_check(repo, "report", "src", "-o", "out/report.md")
    md = (repo / "out" / "report.md").read_text()
    assert f"**{totals['references']} API references**" in md and "target torch_npu, chip A2" in md
    for f in data["files"]:
        assert f"| {f['path']} | {f['lines']} | {f['references']} | {f['supported']} |" in md

    assert lsp_check(repo, "report", "src/clean.py").returncode == 0
    missing = lsp_check(repo, "report", "nowhere")
    assert missing.returncode == 2 and "nowhere: no such file or directory" in missing.stderr


def test_an_unreadable_file_is_listed_with_its_error(tmp_path: Path) -> None:
    (tmp_path / "blob.py").write_bytes(b"\x00\x01")
    (tmp_path / "a.py").write_text("import torch\nx = torch.ones(1).cuda()\n")
    proc = lsp_check(tmp_path, "report", ".", "-o", "r.json")
    assert proc.returncode == 2 and "error: blob.py: binary file" in proc.stderr
    rows = {row["path"]: row for row in json.loads((tmp_path / "r.json").read_text())["files"]}
    assert rows["blob.py"]["error"].startswith("binary file") and rows["blob.py"]["references"] == 0
    assert rows["a.py"]["safe"] == 1 and rows["a.py"]["error"] is None


def test_a_warm_report_reads_the_cache(repo: Path) -> None:
    first = report(repo, "src")
    assert (repo / ".lsp-check-cache").is_dir()
    lsp_check(repo, "src")  # a plain check in between keeps the cached references
    second = report(repo, "src")
    assert first["files"] == second["files"] and first["unknown_apis"] == second["unknown_apis"]


def test_mindspore_target_counts_calls_with_a_consistent_counterpart(tmp_path: Path) -> None:
    (tmp_path / "port.py").write_text(
        "import torch\n"
        "import torch.nn as nn\n"
        "\n"
        "x = torch.ones(2)\n"  # consistent: a rename (MS103, safe fix)
        "y = torch.cat([x, x])\n"  # consistent
        "m = nn.Linear(2, 3)\n"  # differs (MS102)
        "d = nn.Dropout(p=0.1)\n"  # consistent, but a trap too (MS201): manual
        "dtype = torch.float32\n"  # not a call
    )
    tables = tables_for(Settings(target="mindspore"), RULE_SET)
    assert tables.counterparts["torch.ones"].consistent and not tables.counterparts["torch.nn.Linear"].consistent
    data = report(tmp_path, "port.py", "--target", "mindspore")
    assert data["mindspore"] == {"table_version": tables.counterparts_version, "torch_calls": 4, "consistent": 3,
                                 "differs": 1, "no_counterpart": 0, "share": 0.75}
    row = data["files"][0]
    assert (row["references"], row["supported"], row["safe"], row["manual"]) == (4, 0, 2, 2)
    md = lsp_check(tmp_path, "report", "port.py", "--target", "mindspore", "--exit-zero").stdout
    assert "3 of 4 torch calls (75.0%) have a consistent MindSpore counterpart (a rename); with a counterpart " \
           "that differs: 1; with none: 0" in md
    assert "target mindspore, MindSpore" in md
    lsp_check(tmp_path, "report", "port.py", "--target", "mindspore", "-o", "port.html")
    assert '<p id="mindspore">3 of 4 torch calls (75.0%)' in (tmp_path / "port.html").read_text()
    assert report(tmp_path, "port.py")["mindspore"] is None  # torch_npu: no such section


# --- HTML in a real browser ------------------------------------------------------------------
def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip("no Chromium (apt-get install -y chromium) to render the HTML report")


def rendered(path: Path, fragment: str = "") -> str:
    """The DOM after the page's scripts ran, from headless Chromium."""
    proc = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000",
                           "--dump-dom", path.as_uri() + fragment], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "<table" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


class Page(HTMLParser):
    """What the page shows: the file table's rows and header state, the total cards and
    the chart labels (each number is in a data-value next to its key)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.sorted: dict[str, str] = {}
        self.cards: dict[str, int] = {}
        self.chart: dict[str, dict[str, int]] = {}
        self.external: list[str] = []
        self._section: list[str] = []
        self._card = ""
        self._in_files_body = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs) -> None:
        a = dict(attrs)
        for name in ("src", "href"):
            if a.get(name, "").startswith(("http:", "https:", "//")):
                self.external.append(a[name])
        if tag == "link":
            self.external.append(str(a))
        if tag == "table" and a.get("id") == "files":
            self._section.append("files")
        if tag == "tbody" and self._section[-1:] == ["files"]:
            self._in_files_body = True
        if tag == "tr" and self._in_files_body:
            self.rows.append([])
        if tag == "td" and self._in_files_body:
            self.rows[-1].append(a["data-value"])
        if tag == "th" and self._section[-1:] == ["files"] and a.get("aria-sort"):
            self.sorted[a["data-key"]] = a["aria-sort"]
        if tag == "div" and a.get("id", "").startswith("total-"):
            self._card = a["id"].removeprefix("total-")
        if tag == "b" and self._card:
            self.cards[self._card] = int(a["data-value"])
            self._card = ""
        if tag == "svg":
            self._section.append(a.get("id", ""))
        if tag == "text" and "data-key" in a:
            self.chart.setdefault(self._section[-1], {})[a["data-key"]] = int(a["data-value"])

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in_files_body = False
        if tag in ("table", "svg") and self._section:
            self._section.pop()


def test_html_report_in_headless_chromium_shows_the_json_numbers(repo: Path) -> None:
    chromium()
    lsp_check(repo, "report", "src", "-o", "report.json")
    lsp_check(repo, "report", "src", "-o", "report.html")
    data = json.loads((repo / "report.json").read_text())
    html = (repo / "report.html").read_text()
    assert "<style>" in html and "<script>" in html and "<svg" in html

    page = Page(rendered(repo / "report.html"))
    assert page.external == []  # self-contained: nothing to fetch
    columns = ["path", "lines", "references", *STATUS_KEYS, "findings", "effort"]
    effort_rank = {"none": "0", "low": "1", "medium": "2", "high": "3"}
    expected = [[str(f[c]) if c != "effort" else effort_rank[f[c]] for c in columns] for f in data["files"]]
    assert page.rows == expected
    totals = data["totals"]
    assert page.cards == {k: totals[k] for k in ("references", *STATUS_KEYS, "findings")}
    assert page.chart["status-chart"] == {k: totals[k] for k in STATUS_KEYS}
    assert page.chart["effort-chart"] == totals["effort"]

    by_findings = Page(rendered(repo / "report.html", "#sort=findings-desc"))
    assert by_findings.sorted == {"findings": "descending"}
    counts = [int(row[columns.index("findings")]) for row in by_findings.rows]
    assert counts == sorted(counts, reverse=True) and sorted(by_findings.rows) == sorted(expected)
    by_name = Page(rendered(repo / "report.html", "#sort=path"))
    assert [row[0] for row in by_name.rows] == sorted(f["path"] for f in data["files"])


TRAINING = """\
import torch
import torch.nn.functional as F


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def train(model, loader):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for x in loader:
        loss = model(x)
        loss.backward()
        opt.step()
        print(loss.item())
        torch.cuda.synchronize()
"""


def test_performance_section_in_every_format(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAINING)
    (tmp_path / "plain.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    data = report(tmp_path, ".")
    performance = data["performance"]
    assert performance["files"] == [{"path": "train.py", "fused_apis": 2, "host_syncs": 2, "other_advice": 0}]
    assert performance["totals"] == {"fused_apis": 2, "host_syncs": 2, "other_advice": 0}
    assert {r["code"]: r["count"] for r in performance["by_rule"]} == {"NPU601": 1, "NPU603": 1, "NPU611": 2}
    # advice is not migration work: train.py's torch.cuda.synchronize is its only finding
    train = next(f for f in data["files"] if f["path"] == "train.py")
    assert train["findings"] == 1 and train["effort"] == "low"

    lsp_check(tmp_path, "report", ".", "-o", "r.csv", "--exit-zero")
    rows = {r["path"]: r for r in csv.DictReader(io.StringIO((tmp_path / "r.csv").read_text()))}
    assert (rows["train.py"]["fused_apis"], rows["train.py"]["host_syncs"]) == ("2", "2")
    assert (rows["TOTAL"]["fused_apis"], rows["TOTAL"]["host_syncs"]) == ("2", "2")
    lsp_check(tmp_path, "report", ".", "-o", "r.md", "--exit-zero")
    md = (tmp_path / "r.md").read_text()
    assert "## Performance" in md and "| train.py | 2 | 2 | 0 |" in md
    lsp_check(tmp_path, "report", ".", "-o", "r.html", "--exit-zero")
    html = (tmp_path / "r.html").read_text()
    assert '<table id="performance">' in html and "<tr><td>train.py</td><td>2</td><td>2</td><td>0</td></tr>" in html
