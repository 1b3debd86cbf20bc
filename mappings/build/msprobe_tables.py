"""msprobe/thresholds.toml: the acc_check grading cascade the "Run on NPU" runner applies.

Reads `msprobe/msprobe_thresholds.tsv` and turns the rows the runner grades with into
structured [[threshold]] entries (metric, comparison, value, outcome, position in the
cascade). Each value is parsed from the TSV row it comes from, and the row's rule text
and source travel with it, so the table can be audited against upstream.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

MSPROBE_VERSION = "26.2.0"
FLOATS = ["float16", "bfloat16", "float32", "float64"]
LOW_PRECISION = ["float16", "bfloat16"]
FULL_PRECISION = ["float32", "float64"]
INTEGERS = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]

# (id, TSV scope, TSV metric, TSV dtype, fields). `value` is parsed from the row's
# threshold column unless `fields` sets it: the share limits (0.99, 0.999, 0.9999) and
# bf16's eps are stated in the row's rule text, where the column holds the cutoff.
SPECS: list[tuple[str, str, str, str, dict]] = [
    ("nan-inf-placement", "absolute threshold method", "inf/nan consistency", "all float",
     dict(stage="acc-check", order=0, metric="nan-inf-mismatch", dtypes=FLOATS, op=">", outcome="error")),
    ("cosine", "acc_check (run_ut) per-output status", "cosine_sim", "all float",
     dict(stage="acc-check", order=1, metric="cosine", dtypes=FLOATS, op="<=", outcome="error")),
    ("max-abs", "acc_check (run_ut) per-output status", "max_abs_err", "all float",
     dict(stage="acc-check", order=2, metric="max-abs", dtypes=FLOATS, op="<", outcome="pass")),
    ("hundredth-low-precision", "acc_check (run_ut) per-output status", "rel_err_hundredth (双百)", "float16,bfloat16",
     dict(stage="acc-check", order=3, metric="rel-err-share", below=0.01, value=0.99, dtypes=LOW_PRECISION, op="<=",
          outcome="error")),
    ("thousandth-low-precision", "acc_check (run_ut) per-output status", "rel_err_thousandth (双千)", "float16,bfloat16",
     dict(stage="acc-check", order=4, metric="rel-err-share", below=0.001, value=0.999, dtypes=LOW_PRECISION, op=">",
          outcome="pass", otherwise="warning")),
    ("thousandth-full-precision", "acc_check (run_ut) per-output status", "rel_err_thousandth (双千)", "float32,float64",
     dict(stage="acc-check", order=3, metric="rel-err-share", below=0.001, value=0.999, dtypes=FULL_PRECISION, op="<=",
          outcome="error")),
    ("ten-thousandth-full-precision", "acc_check (run_ut) per-output status", "rel_err_ten_thousandth (双万)",
     "float32,float64",
     dict(stage="acc-check", order=4, metric="rel-err-share", below=0.0001, value=0.9999, dtypes=FULL_PRECISION, op=">",
          outcome="pass", otherwise="warning")),
    ("exact-integer", "acc_check (run_ut)", "integer/bool outputs", "bool,int*,uint*",
     dict(stage="acc-check", order=1, metric="mismatch-ratio", dtypes=INTEGERS, op=">", outcome="error",
          otherwise="pass")),
    ("dropout-zero-count", "acc_check (run_ut)", "dropout outputs", "any",
     dict(stage="dropout", order=1, metric="zero-count-diff-ratio", dtypes=FLOATS, op="<", outcome="pass",
          otherwise="error", min_numel=100)),
    ("rel-err-eps-bfloat16", "acc_check (run_ut)", "rel_err definition", "all float",
     dict(stage="definition", order=0, metric="rel-err-eps", dtypes=["bfloat16"], value=2**-8)),
    # Reference values below these are "small": ULP errors are measured only above them,
    # since near zero one ULP is a subnormal step and any difference is billions of ULPs.
    ("small-value-low-precision", "new precision standard", "small value threshold (is 'small')",
     "float16 / bfloat16 / float32",
     dict(stage="definition", order=0, metric="small-value", dtypes=LOW_PRECISION, value=2**-10)),
    ("small-value-float32", "new precision standard", "small value threshold (is 'small')",
     "float16 / bfloat16 / float32",
     dict(stage="definition", order=0, metric="small-value", dtypes=["float32"], value=2**-20)),
]

KEY_ORDER = ["id", "stage", "order", "metric", "below", "dtypes", "op", "value", "outcome", "otherwise", "min-numel",
             "rule", "source"]


def build(data_dir: Path, out_dir: Path) -> list[Path]:
    rows = _read_rows(data_dir / "msprobe" / "msprobe_thresholds.tsv")
    entries = []
    for ident, scope, metric, dtype, fields in SPECS:
        row = rows[(scope, metric, dtype)]
        entry = {"id": ident, **{k.replace("_", "-"): v for k, v in fields.items()}}
        if "below" in entry:  # the row's threshold column is the relative-error cutoff
            assert float(row["threshold"]) == entry["below"], (ident, row["threshold"])
        if "value" not in entry:
            entry["value"] = float(row["threshold"])
        entry["rule"] = row["rule"]
        entry["source"] = f"{row['source']} (via msprobe_thresholds.tsv: {scope} / {metric})"
        entries.append(entry)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "thresholds.toml"
    path.write_text(_render(entries), encoding="utf-8")
    return [path]


def _read_rows(path: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return {(r["scope"], r["metric"], r["dtype"]): r for r in csv.DictReader(f, delimiter="\t")}


def _render(entries: list[dict]) -> str:
    lines = [
        "# Generated by `python mappings/build msprobe` from mappings/upstream/msprobe/msprobe_thresholds.tsv.",
        "# Do not edit by hand.",
        "",
        "[meta]",
        f"title = {_value('msprobe acc_check per-output grading (used by Run on NPU)')}",
        f"version = {_value(MSPROBE_VERSION)}",
        f"sources = {_value(sorted({e['source'].split(' (via')[0] for e in entries}))}",
    ]
    for entry in entries:
        lines += ["", "[[threshold]]"]
        lines += [f"{key} = {_value(entry[key])}" for key in KEY_ORDER if key in entry]
    return "\n".join(lines) + "\n"


def _value(value: object) -> str:
    # JSON strings, numbers, booleans and flat arrays of them are valid TOML values.
    return json.dumps(value, ensure_ascii=False)
