"""The run page's plot and table from a result's JSON, with the fields a run may add beside
`first_divergence`: `first_overflow`, and per layer `benchmark` (the dtype's own error) and
`decided_by`; and without them."""

from __future__ import annotations

import copy
import re

from ascend_lsp.lsp.run_view import run_view_html

PLACE = {"path": "/w/model.py"}


def layer(module, cls, verdict, max_rel, cosine, line, depth=1, **extra):
    return {"module": module, "class": cls, "kind": "module", "call": 0, "verdict": verdict, "input_verdict": "PASS",
            "reason": f"reason of {module}", "metrics": {"max_rel": max_rel, "mean_rel": max_rel, "cosine": cosine},
            "source": {**PLACE, "line": line}, "call_source": {**PLACE, "line": line + 10, "function": "forward"},
            "parent": 0 if depth else None, "depth": depth, **extra}


def located(entry: dict) -> dict:
    return {key: entry[key] for key in ("module", "class", "kind", "call", "verdict", "reason", "metrics", "source",
                                        "call_source")}


LAYERS = [layer("", "Net", "ERROR", None, None, 30, depth=0),
          layer("fc1", "Linear", "PASS", 0.0, 1.0, 5, benchmark={"max_rel": 1e-3, "cosine": 1 - 1e-6},
                decided_by="benchmark: max rel 0 ≤ 2 × 0.001"),
          layer("fc2", "Linear", "ERROR", None, None, 6, benchmark={"max_rel": 1e-3, "cosine": 1 - 1e-6},
                decided_by="overflow: 12 inf where the reference is finite")]
RESULT = {"status": "error", "message": "ERROR: first divergence: fc2 <b>", "entry": "forward", "target": "emulate",
          "emulated": True, "layers": LAYERS, "first_divergence": located(LAYERS[2]),
          "first_overflow": located(LAYERS[2]), "first_warning": None}


def test_marks_link_the_first_overflow_and_divergence_to_their_construction_lines():
    html = run_view_html(RESULT, "n0nce")
    # Three calls across 648 px: x = 56 + (index + 0.5) * 216; both marks at #2, on two label rows.
    assert ('<g class="mark overflow" id="mark-overflow" data-path="/w/model.py" data-line="6" tabindex="0" '
            'role="link"><title>first overflow: #2 fc2 (Linear) · line 6</title><line x1="596.0" y1="14" '
            'x2="596.0" y2="378"/><text x="596.0" y="10" text-anchor="end">') in html
    assert ('<g class="mark divergence" id="mark-divergence" data-path="/w/model.py" data-line="6" tabindex="0" '
            'role="link"><title>first divergence: #2 fc2 (Linear) · line 6</title><line x1="596.0" y1="28" ') in html
    assert "<h1>Run on emulate (emulated): forward</h1>" in html
    assert '<p class="message">ERROR: first divergence: fc2 &lt;b&gt;</p>' in html


def test_the_plot_draws_each_layer_the_dtype_band_and_what_has_no_value():
    html = run_view_html(RESULT, "n0nce")
    panel = re.search(r'<g class="panel" id="panel-max_rel">(.*?)</g>', html).group(1)
    # Zeros and the band at 1e-3: the scale goes from a decade below the band up two decades.
    assert re.findall(r'<text x="50" y="[\d.]+" text-anchor="end">(1e-?\d+)</text>', panel) == ["1e-4", "1e-3",
                                                                                                "1e-2"]
    assert panel.count('<rect class="band"') == 2
    assert '<rect class="band" x="272.0" y="119.0" width="216.0" height="75.0"/>' in panel
    assert '<circle class="pass" cx="380.0" cy="194.0" r="3"><title>#1 fc1: largest relative error 0 (PASS)' in panel
    assert panel.count('<text class="none"') == 2  # (root) and fc2: no element finite on both sides
    assert "the dtype's own error (benchmark)" in html


def test_the_table_shows_the_benchmark_and_what_decided():
    html = run_view_html(RESULT, "n0nce")
    heads = re.findall(r"<th>(.*?)</th>", html)
    assert heads == ["#", "module", "class", "call", "verdict", "inputs", "max rel", "mean rel", "cosine",
                     "dtype&#x27;s own max rel", "built at", "called at", "decided by"]
    row = re.search(r'<tr id="layer-2" class="overflow divergence">(.*?)</tr>', html).group(1)
    assert '<td class="error">ERROR ← first overflow ← first divergence</td>' in row
    assert row.endswith('<td><span data-path="/w/model.py" data-line="6" tabindex="0" role="link">line 6</span></td>'
                        '<td><span data-path="/w/model.py" data-line="16" tabindex="0" role="link">line 16</span></td>'
                        '<td class="text">overflow: 12 inf where the reference is finite</td>')
    assert '<td>–</td><td>–</td><td>–</td><td>0.001</td>' in row


def test_a_result_of_today_without_benchmark_or_overflow():
    today = copy.deepcopy(RESULT)
    del today["first_overflow"]
    for entry in today["layers"]:
        entry.pop("benchmark", None)
        entry.pop("decided_by", None)
    html = run_view_html(today, "n0nce")
    assert 'id="mark-overflow"' not in html and 'id="mark-divergence"' in html
    assert 'class="band"' not in html and "dtype" not in html
    assert '<td class="text">reason of fc2</td>' in html
    assert '<tr id="layer-2" class="divergence">' in html
