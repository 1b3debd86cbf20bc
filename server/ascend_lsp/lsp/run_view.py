"""A run's per-layer result as a page of its own (the editor's webview): the table, and a plot of
each layer's error along the network (the largest relative error and 1 − cosine, on log scales)
with the dtype's own error (a layer's `benchmark`, when the run has one) as a band, and the first
overflow and first divergence marked. A mark, and a line number in the table, opens that line.

One self-contained document: inline CSS and script allowed by a Content-Security-Policy nonce,
inline SVG, nothing fetched. It reads the result's JSON form (`RunResult.to_dict()`), so fields
a run does not have (`first_overflow`, a layer's `benchmark` and `decided_by`) are simply absent.
"""

from __future__ import annotations

import math
from html import escape

WIDTH, PANEL, LEFT, RIGHT, TOP, GAP, BOTTOM = 720, 150, 56, 16, 44, 34, 24  # fits half an editor's width
FLOOR = 1e-12  # the lowest decade a plot goes down to; a zero error is drawn on the plot's floor
VERDICT_CLASS = {"PASS": "pass", "WARNING": "warning", "ERROR": "error"}
# (key in a layer's metrics, the plot's title, the plotted value)
PANELS = (("max_rel", "largest relative error", lambda v: v),
          ("cosine", "1 − cosine", lambda v: 1.0 - v))
MARKS = (("first_overflow", "first overflow", "overflow"), ("first_divergence", "first divergence", "divergence"))

CSS = """
body{font:13px/1.4 var(--vscode-font-family,system-ui,sans-serif);color:var(--vscode-foreground,#222);
background:var(--vscode-editor-background,#fff);margin:1rem}
h1{font-size:1.2rem;margin:0 0 .3rem}.message{margin:0 0 .8rem;overflow-wrap:anywhere}
table{border-collapse:collapse;margin-top:1rem}th,td{padding:.15rem .5rem;text-align:right;white-space:nowrap}
th:nth-child(2),th:nth-child(3),th:last-child{text-align:left}th{position:sticky;top:0;background:var(--vscode-editor-background,#fff);border-bottom:1px solid #8884}
td.name{text-align:left;white-space:pre;font-family:var(--vscode-editor-font-family,monospace)}
td.text{text-align:left;white-space:normal;min-width:16rem}
tr.divergence td{background:#d32f2f22}tr.overflow td{background:#7b1fa222}
.pass{color:#2e7d32}.warning{color:#ef6c00}.error{color:#d32f2f}
[data-line]{cursor:pointer;color:var(--vscode-textLink-foreground,#0066cc);text-decoration:underline}
svg{display:block;max-width:100%}svg text{font-size:11px;fill:var(--vscode-foreground,#222)}
.axis{stroke:#8888;stroke-width:1}.grid{stroke:#8883;stroke-width:1}
.trace{fill:none;stroke:#8889;stroke-width:1}.band{fill:#42a5f5;fill-opacity:.3}
circle.pass{fill:#2e7d32}circle.warning{fill:#ef6c00}circle.error{fill:#d32f2f}text.none{fill:#d32f2f}
g.mark line{stroke-width:2;stroke-dasharray:5 3}g.mark text{text-decoration:underline;font-weight:bold}
g.divergence line{stroke:#d32f2f}g.divergence text{fill:#d32f2f}
g.overflow line{stroke:#7b1fa2}g.overflow text{fill:#7b1fa2}
.legend rect{fill:#42a5f5;fill-opacity:.3}
"""

SCRIPT = """
(function () {
  var vscode = typeof acquireVsCodeApi === "function" ? acquireVsCodeApi() : null;
  function open(target) {
    var link = target && target.closest ? target.closest("[data-line]") : null;
    if (!link || !vscode) { return false; }
    vscode.postMessage({type: "open", path: link.getAttribute("data-path"),
                        line: Number(link.getAttribute("data-line"))});
    return true;
  }
  document.addEventListener("click", function (event) { if (open(event.target)) { event.preventDefault(); } });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && open(event.target)) { event.preventDefault(); }
  });
})();
"""


def run_view_html(result: dict, nonce: str) -> str:
    """The page for `result` (a run with `layers`), its inline style and script allowed by `nonce`."""
    layers = result.get("layers") or []
    marked = {key: layer_index(layers, result.get(key)) for key, _, _ in MARKS}
    title = f"Run on {result.get('target')}{' (emulated)' if result.get('emulated') else ''}: {result.get('entry')}"
    policy = f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
            f"<title>{escape(title)}</title><style nonce=\"{nonce}\">{CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1><p class=\"message\">{escape(str(result.get('message', '')))}</p>"
            f"{plot(layers, marked)}{table(layers, marked)}"
            f'<script nonce="{nonce}">{SCRIPT}</script></body></html>\n')


def layer_index(layers: list[dict], located: dict | None) -> int | None:
    """The index of the call a `first_divergence`-shaped dict names."""
    if not located:
        return None
    return next((i for i, layer in enumerate(layers) if (layer.get("module"), layer.get("call"), layer.get("kind"))
                 == (located.get("module"), located.get("call"), located.get("kind"))), None)


def link(place: dict | None, text: str) -> str:
    """`text` that opens `place` ({path, line}) when clicked; plain text when there is no line."""
    attributes = _link_attributes(place)
    return f"<span{attributes}>{escape(text)}</span>" if attributes else escape(text)


def plot(layers: list[dict], marked: dict[str, int | None]) -> str:
    if not layers:
        return "<p>No layer was recorded.</p>"
    height = TOP + len(PANELS) * (PANEL + GAP) - GAP + BOTTOM
    step = (WIDTH - LEFT - RIGHT) / len(layers)
    parts = [f'<svg id="plot" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
             f'aria-label="error per layer">']
    for number, (key, label, value) in enumerate(PANELS):
        top = TOP + number * (PANEL + GAP)
        parts.append(_panel(layers, key, label, value, top, step))
    for key, label, css in MARKS:
        index = marked[key]
        if index is None:
            continue
        x = LEFT + (index + 0.5) * step
        layer = layers[index]
        row = 0 if key == "first_overflow" else 1
        name = f"{label}: #{index} {layer.get('module') or '(root)'}" + \
            (f" ({layer['class']})" if layer.get("class") else "")
        place = layer.get("source") or layer.get("call_source")
        where = f" · line {place['line']}" if place and place.get("line") else ""
        anchor = "end" if x > WIDTH / 2 else "start"
        parts.append(f'<g class="mark {css}" id="mark-{css}"{_link_attributes(place)}><title>{escape(name + where)}'
                     f'</title><line x1="{x:.1f}" y1="{14 + row * 14}" x2="{x:.1f}" y2="{height - BOTTOM}"/>'
                     f'<text x="{x:.1f}" y="{10 + row * 14}" text-anchor="{anchor}">{escape(name + where)}</text></g>')
    parts.append(f'<text x="{LEFT}" y="{height - 6}">layer calls in execution order (#0 – #{len(layers) - 1})'
                 f'</text>')
    if any(layer.get("benchmark") for layer in layers):
        parts.append(f'<g class="legend"><rect x="{WIDTH - RIGHT - 230}" y="{height - 16}" width="14" height="10"/>'
                     f'<text x="{WIDTH - RIGHT - 212}" y="{height - 6}">the dtype\'s own error (benchmark)</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _link_attributes(place: dict | None) -> str:
    if not place or not isinstance(place.get("line"), int) or not place.get("path"):
        return ""
    return f' data-path="{escape(str(place["path"]))}" data-line="{place["line"]}" tabindex="0" role="link"'


def _panel(layers: list[dict], key: str, label: str, value, top: float, step: float) -> str:
    def plotted(metrics) -> float | None:
        raw = (metrics or {}).get(key)
        return None if raw is None else max(float(value(raw)), 0.0)

    points = [plotted(layer.get("metrics")) for layer in layers]
    bands = [plotted(layer.get("benchmark")) for layer in layers]
    known = [v for v in points + bands if v]
    # A decade below the smallest error, so that it (or a band) shows above the zeros on the floor.
    low = max(FLOOR, 10.0 ** (math.floor(math.log10(min(known))) - 1)) if known else 1e-8
    high = max(10.0 ** math.ceil(math.log10(max(known))) if known else 1.0, low * 100)

    def y(v: float) -> float:
        v = min(max(v, low), high)
        return top + PANEL * (math.log10(high) - math.log10(v)) / (math.log10(high) - math.log10(low))

    def x(i: int) -> float:
        return LEFT + (i + 0.5) * step

    parts = [f'<g class="panel" id="panel-{key}"><text x="{LEFT}" y="{top - 6}">{escape(label)} (log scale; '
             f'0 on the floor)</text>']
    for decade in range(round(math.log10(low)), round(math.log10(high)) + 1):
        at = y(10.0 ** decade)
        parts.append(f'<line class="grid" x1="{LEFT}" y1="{at:.1f}" x2="{WIDTH - RIGHT}" y2="{at:.1f}"/>'
                     f'<text x="{LEFT - 6}" y="{at + 4:.1f}" text-anchor="end">1e{decade}</text>')
    parts.append(f'<line class="axis" x1="{LEFT}" y1="{top}" x2="{LEFT}" y2="{top + PANEL}"/>'
                 f'<line class="axis" x1="{LEFT}" y1="{top + PANEL}" x2="{WIDTH - RIGHT}" y2="{top + PANEL}"/>')
    for i, band in enumerate(bands):
        if band is not None:
            parts.append(f'<rect class="band" x="{x(i) - step / 2:.1f}" y="{y(band):.1f}" width="{step:.1f}" '
                         f'height="{top + PANEL - y(band):.1f}"/>')
    trace = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(points) if v is not None)
    parts.append(f'<polyline class="trace" points="{trace}"/>')
    for i, (layer, v) in enumerate(zip(layers, points)):
        name = f"#{i} {layer.get('module') or '(root)'}"
        if v is None:
            parts.append(f'<text class="none" x="{x(i):.1f}" y="{top + 8}" text-anchor="middle">×<title>'
                         f'{escape(name)}: no element finite on both sides</title></text>')
            continue
        verdict = VERDICT_CLASS.get(layer.get("verdict"), "pass")
        parts.append(f'<circle class="{verdict}" cx="{x(i):.1f}" cy="{y(v):.1f}" r="3"><title>{escape(name)}: '
                     f'{escape(label)} {v:.3g} ({escape(str(layer.get("verdict")))})</title></circle>')
    parts.append("</g>")
    return "".join(parts)


def table(layers: list[dict], marked: dict[str, int | None]) -> str:
    benchmark = any(layer.get("benchmark") for layer in layers)
    heads = ["#", "module", "class", "call", "verdict", "inputs", "max rel", "mean rel", "cosine"] + \
        (["dtype's own max rel"] if benchmark else []) + ["built at", "called at", "decided by"]
    rows = []
    for i, layer in enumerate(layers):
        metrics = layer.get("metrics") or {}
        notes = [label for key, label, _ in MARKS if marked[key] == i]
        css = " ".join(css for key, _, css in MARKS if marked[key] == i)
        verdict = str(layer.get("verdict"))
        cells = [f"<td>{i}</td>",
                 f'<td class="name">{"  " * int(layer.get("depth") or 0)}{escape(layer.get("module") or "(root)")}'
                 f"</td>",
                 f"<td class=\"name\">{escape(str(layer.get('class') or ''))}</td>", f"<td>{layer.get('call', 0)}</td>",
                 f'<td class="{VERDICT_CLASS.get(verdict, "")}">{escape(verdict)}'
                 f'{"".join(f" ← {note}" for note in notes)}</td>',
                 f"<td>{escape(str(layer.get('input_verdict', '')))}</td>",
                 _number(metrics.get("max_rel")), _number(metrics.get("mean_rel")), _number(metrics.get("cosine"), 6)]
        if benchmark:
            cells.append(_number((layer.get("benchmark") or {}).get("max_rel")))
        built, called = layer.get("source"), layer.get("call_source")
        cells += [f"<td>{link(built, _line(built))}</td>", f"<td>{link(called, _line(called))}</td>",
                  f'<td class="text">{escape(str(layer.get("decided_by") or layer.get("reason") or ""))}</td>']
        classes = f' class="{css}"' if css else ""
        rows.append(f'<tr id="layer-{i}"{classes}>{"".join(cells)}</tr>')
    return (f'<table id="layers"><thead><tr>{"".join(f"<th>{escape(h)}</th>" for h in heads)}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _line(place: dict | None) -> str:
    return f"line {place['line']}" if place and place.get("line") else "–"


def _number(value, digits: int = 3) -> str:
    return f"<td>{'–' if value is None else format(value, f'.{digits}g')}</td>"
