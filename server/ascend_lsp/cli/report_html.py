"""The migration report as one self-contained HTML file: inline CSS, inline JS (the file
table sorts on a header click, or on load from `#sort=COLUMN` / `#sort=COLUMN-desc`),
and inline SVG charts. No CDN, nothing fetched: it opens from a CI artifact offline."""

from __future__ import annotations

from html import escape

from .report_terms import (COLUMNS, EFFORT, STATUS_KEYS, mindspore_sentence, not_checked_sentence,
                           performance_sentence, plural, target_line)

COLOURS = {"supported": "#2e7d32", "safe": "#66bb6a", "unsafe": "#ffb300", "manual": "#fb8c00",
           "unsupported": "#d32f2f", "unknown": "#9e9e9e", "other": "#cfd8dc"}
EFFORT_COLOURS = {"none": "#2e7d32", "low": "#66bb6a", "medium": "#fb8c00", "high": "#d32f2f"}
NUMERIC = frozenset(COLUMNS[1:-1])
EFFORT_ORDER = {bucket: index for index, bucket in enumerate(EFFORT)}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2rem auto;max-width:1200px;color:#222;
padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
.meta{color:#666}.cards{display:flex;flex-wrap:wrap;gap:.6rem;margin:1rem 0}
.card{border:1px solid #ddd;border-radius:6px;padding:.5rem .8rem;min-width:7rem}
.card b{display:block;font-size:1.4rem}.card span{color:#555;font-size:.85rem}
table{border-collapse:collapse;width:100%}th,td{padding:.3rem .5rem;border-bottom:1px solid #eee;text-align:right}
th:first-child,td:first-child{text-align:left;overflow-wrap:anywhere}
#rules td:nth-child(2),#rules th:nth-child(2){text-align:left}
thead th{cursor:pointer;user-select:none;background:#f6f6f6;position:sticky;top:0}
thead th[aria-sort=ascending]::after{content:" ▲"}thead th[aria-sort=descending]::after{content:" ▼"}
tfoot td{font-weight:bold;border-top:2px solid #ccc}
.effort-none{color:#2e7d32}.effort-low{color:#43a047}.effort-medium{color:#ef6c00}
.effort-high{color:#c62828;font-weight:bold}
.legend dt{font-weight:bold}.legend dd{margin:0 0 .4rem 1rem;color:#444}code{background:#f3f3f3;padding:0 .2rem}
svg text{font:12px system-ui,sans-serif}
"""

JS = """
(function () {
  var table = document.getElementById("files");
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  function value(row, index, numeric) {
    var cell = row.cells[index];
    var v = cell.getAttribute("data-value");
    return numeric ? parseFloat(v) : v;
  }
  function sort(key, descending) {
    var index = -1;
    for (var i = 0; i < heads.length; i++) {
      if (heads[i].getAttribute("data-key") === key) { index = i; }
      heads[i].removeAttribute("aria-sort");
    }
    if (index < 0) { return; }
    var numeric = heads[index].getAttribute("data-type") === "number";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a, index, numeric), y = value(b, index, numeric);
      var order = x < y ? -1 : x > y ? 1 : 0;
      if (order === 0) { order = value(a, 0, false) < value(b, 0, false) ? -1 : 1; }
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    heads[index].setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  for (var i = 0; i < heads.length; i++) {
    heads[i].addEventListener("click", function (event) {
      var head = event.currentTarget, now = head.getAttribute("aria-sort");
      // Numbers sort largest first on the first click, names A to Z; a second click reverses.
      var descending = now ? now === "ascending" : head.getAttribute("data-type") === "number";
      sort(head.getAttribute("data-key"), descending);
    });
  }
  var wanted = /^#sort=([a-z_]+?)(-desc)?$/.exec(window.location.hash);
  if (wanted) { sort(wanted[1], !!wanted[2]); }
})();
"""


def _status_bar(totals: dict, labels: dict) -> str:
    """A stacked bar of the references by status, with a labelled legend."""
    width, total = 900, totals["references"] or 1
    x, parts, legend = 0.0, [], []
    for index, key in enumerate(STATUS_KEYS):
        share = totals[key] / total
        w = width * share
        if w:
            parts.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="28" fill="{COLOURS[key]}">'
                         f'<title>{escape(labels[key])}: {totals[key]}</title></rect>')
        x += w
        lx, ly = (index % 4) * 225, 48 + (index // 4) * 20
        legend.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{COLOURS[key]}"/>'
                      f'<text x="{lx + 18}" y="{ly}" data-key="{key}" data-value="{totals[key]}">'
                      f'{escape(labels[key])}: {totals[key]} ({share:.1%})</text>')
    return (f'<svg id="status-chart" role="img" aria-label="API references by status" width="{width}" height="96" '
            f'viewBox="0 0 {width} 96" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}{"".join(legend)}</svg>')


def _effort_bars(effort: dict) -> str:
    most = max(effort.values()) or 1
    bars = []
    for index, bucket in enumerate(EFFORT):
        y, w = index * 26, 300 * effort[bucket] / most
        bars.append(f'<text x="0" y="{y + 15}">{bucket}</text>'
                    f'<rect x="70" y="{y + 2}" width="{w:.2f}" height="18" fill="{EFFORT_COLOURS[bucket]}"/>'
                    f'<text x="{76 + w:.2f}" y="{y + 15}" data-key="{bucket}" data-value="{effort[bucket]}">'
                    f'{effort[bucket]}</text>')
    return (f'<svg id="effort-chart" role="img" aria-label="files by effort" width="420" height="{26 * len(EFFORT)}" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(bars)}</svg>')


def _cell(column: str, value) -> str:
    if column == "effort":
        return f'<td data-value="{EFFORT_ORDER[value]}" class="effort-{value}">{value}</td>'
    if column in NUMERIC:
        return f'<td data-value="{value}">{value}</td>'
    return f'<td data-value="{escape(str(value))}">{escape(str(value))}</td>'


def as_html(report: dict) -> str:
    totals, settings = report["totals"], report["settings"]
    labels = {s["key"]: s["label"] for s in report["statuses"]}
    names = {"path": "File", "lines": "Lines", "references": "API refs", "findings": "Findings",
             "effort": "Effort", **labels}
    cards = "".join(f'<div class="card" id="total-{key}"><b data-value="{totals[key]}">{totals[key]}</b>'
                    f'<span>{escape(names.get(key, key))}</span></div>'
                    for key in ("references", *STATUS_KEYS, "findings"))
    head = "".join(f'<th data-key="{c}" data-type="{"number" if c in NUMERIC or c == "effort" else "text"}">'
                   f'{escape(names[c])}</th>' for c in COLUMNS)
    rows = "".join('<tr' + (f' title="{escape(row["error"])}"' if row["error"] else "") + ">"
                   + "".join(_cell(c, row[c]) for c in COLUMNS) + "</tr>" for row in report["files"])
    foot = ("<td>Total</td>" + "".join(f'<td data-value="{totals[c]}">{totals[c]}</td>' for c in COLUMNS[1:-1])
            + "<td></td>")
    rules = "".join(f"<tr><td>{r['code']}</td><td>{escape(r['name'])}</td><td>{r['count']}</td><td>{r['safe']}</td>"
                    f"<td>{r['unsafe']}</td></tr>" for r in report["top_rules"])
    unsupported = "".join(f"<li><code>{escape(u['api'])}</code> ({u['code']}): {u['count']}</li>"
                          for u in report["top_unsupported"]) or "<li>None.</li>"
    unknown = "".join(f"<li><code>{escape(u['api'])}</code>: {u['count']}</li>"
                      for u in report["unknown_apis"]) or "<li>None.</li>"
    legend = "".join(f"<dt>{escape(s['label'])}</dt><dd>{escape(s['meaning'])}</dd>" for s in report["statuses"])
    performance = report["performance"]
    perf_rows = "".join(f"<tr><td>{escape(f['path'])}</td><td>{f['fused_apis']}</td><td>{f['host_syncs']}</td>"
                        f"<td>{f['other_advice']}</td></tr>" for f in performance["files"])
    perf_rules = "".join(f"<li>{r['code']} {escape(r['name'])}: {r['count']}</li>" for r in performance["by_rule"])
    missing = report["not_checked"]
    not_checked = (f'<p id="not-checked-summary"><b>{escape(not_checked_sentence(missing))}:</b></p><ul id="not-checked">'
                   + "".join(f"<li>{escape(f['path'])}: {escape(f['error'])}</li>" for f in missing) + "</ul>"
                   if missing else "")
    mindspore = (f'<h2>MindSpore</h2><p id="mindspore">{escape(mindspore_sentence(report["mindspore"]))}</p>'
                 if report["mindspore"] is not None else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Migration report — lsp-check</title><style>{CSS}</style></head>
<body>
<h1>Migration report</h1>
<p class="meta">{escape(report['tool'])}, {escape(report['generated'])} — {escape(target_line(settings))}.
{plural(totals['files'], 'file')}, {totals['lines']} lines, {totals['files_with_findings']} with findings.</p>
{not_checked}
<div class="cards">{cards}</div>
{_status_bar(totals, labels)}
{mindspore}
<h2>Effort</h2>
{_effort_bars(totals['effort'])}
<p>{escape(report['effort_rule'])}</p>
<h2>Files</h2>
<p class="meta">Click a column to sort.</p>
<table id="files"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody><tfoot><tr>{foot}</tr></tfoot></table>
<h2>Top rules</h2>
<table id="rules">
<thead><tr><th>Rule</th><th>Name</th><th>Findings</th><th>Safe fix</th><th>Unsafe fix</th></tr></thead>
<tbody>{rules}</tbody></table>
<h2>Performance</h2><p id="performance-summary">{escape(performance_sentence(performance))}.</p>
<table id="performance"><thead><tr><th>File</th><th>Fused APIs</th><th>Host syncs</th><th>Other advice</th></tr>
</thead><tbody>{perf_rows}</tbody></table><ul id="performance-rules">{perf_rules}</ul>
<h2>Top unsupported APIs</h2><ul id="unsupported">{unsupported}</ul>
<h2>Unknown APIs</h2><p>The tables know nothing about these; check each one on the target.</p>
<ul id="unknown">{unknown}</ul>
<h2>What the columns mean</h2><dl class="legend">{legend}</dl>
<script>{JS}</script>
</body></html>
"""
