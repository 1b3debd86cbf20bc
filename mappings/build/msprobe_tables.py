"""msprobe/thresholds.toml: the standards the "Run on NPU" runner grades with.

Reads `msprobe/msprobe_thresholds.tsv` and turns the rows the runner grades with into
structured [[threshold]] entries: the acc_check cascade, the benchmark method's ratio limits,
and the definitions the worker measures with (small-value domain, ULP parameters, minimum
errors). Each value is parsed from the TSV row it comes from, and the row's rule text and
source travel with it, so the table can be audited against upstream; `package` names the file
and line of the installed mindstudio-probe that holds the value (the tests read it there).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

MSPROBE_VERSION = "26.2.0"
FLOATS = ["float16", "bfloat16", "float32", "float64"]
LOW_PRECISION = ["float16", "bfloat16"]
FULL_PRECISION = ["float32", "float64"]
BENCHMARK_DTYPES = ["float16", "bfloat16", "float32"]
INTEGERS = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"]

# The installed package's files the `package` provenance points into (file:line, then the
# expression tests/runner/test_msprobe_tables.py evaluates there to check the value).
CONFIG = "msprobe/pytorch/api_accuracy_checker/precision_standard/standard_config.py"
UTILS = "msprobe/pytorch/api_accuracy_checker/compare/compare_utils.py"
CONST = "msprobe/core/common/const.py"
# The benchmark method's TSV row: its L0 ratio limits (what a module call gets: msprobe's L1 and
# L2 lists name single APIs) and the small-value error ratio's limit.
BENCHMARK_ROW = ("benchmark method (NPU vs GPU, both vs CPU golden)", "ratios npu_metric/gpu_metric",
                 "float16/bfloat16/float32")
SMALL_VALUE_ROW = ("new precision standard", "small value threshold (is 'small')", "float16 / bfloat16 / float32")
BENCHMARK_ATOL_ROW = ("new precision standard", "small value atol (benchmark method)", "float16 / bfloat16 / float32")
ULP32_ROW = ("ULP method", "ULP thresholds", "float32")
ULP16_ROW = ("ULP method", "ULP thresholds", "float16,bfloat16")

# (id, TSV row (scope, metric, dtype) or None, fields). `value` is parsed from the row's
# threshold column unless `fields` sets it or names how (`parse`: a regex over the threshold
# cell, `per_dtype`: the entry of a "a / b / c" cell for that dtype): the share limits (0.99,
# 0.999, 0.9999) and bf16's eps are stated in the row's rule text, where the column holds the
# cutoff. A row of None is a value the facts do not give: it is read from the installed package
# (`package`), and the tests check every `package` value against that package.
SPECS: list[tuple[str, tuple[str, str, str] | None, dict]] = [
    ("nan-inf-placement", ("absolute threshold method", "inf/nan consistency", "all float"),
     dict(stage="acc-check", order=0, metric="nan-inf-mismatch", dtypes=FLOATS, op=">", outcome="error",
          standard="nan/inf")),
    ("cosine", ("acc_check (run_ut) per-output status", "cosine_sim", "all float"),
     dict(stage="acc-check", order=1, metric="cosine", dtypes=FLOATS, op="<=", outcome="error", standard="cosine")),
    ("max-abs", ("acc_check (run_ut) per-output status", "max_abs_err", "all float"),
     dict(stage="acc-check", order=2, metric="max-abs", dtypes=FLOATS, op="<", outcome="pass", standard="max abs")),
    ("hundredth-low-precision", ("acc_check (run_ut) per-output status", "rel_err_hundredth (双百)", "float16,bfloat16"),
     dict(stage="acc-check", order=3, metric="rel-err-share", below=0.01, value=0.99, dtypes=LOW_PRECISION, op="<=",
          outcome="error", standard="rel err share")),
    ("thousandth-low-precision", ("acc_check (run_ut) per-output status", "rel_err_thousandth (双千)",
                                  "float16,bfloat16"),
     dict(stage="acc-check", order=4, metric="rel-err-share", below=0.001, value=0.999, dtypes=LOW_PRECISION, op=">",
          outcome="pass", otherwise="warning", standard="rel err share")),
    ("thousandth-full-precision", ("acc_check (run_ut) per-output status", "rel_err_thousandth (双千)",
                                   "float32,float64"),
     dict(stage="acc-check", order=3, metric="rel-err-share", below=0.001, value=0.999, dtypes=FULL_PRECISION, op="<=",
          outcome="error", standard="rel err share")),
    ("ten-thousandth-full-precision", ("acc_check (run_ut) per-output status", "rel_err_ten_thousandth (双万)",
                                       "float32,float64"),
     dict(stage="acc-check", order=4, metric="rel-err-share", below=0.0001, value=0.9999, dtypes=FULL_PRECISION, op=">",
          outcome="pass", otherwise="warning", standard="rel err share")),
    ("exact-integer", ("acc_check (run_ut)", "integer/bool outputs", "bool,int*,uint*"),
     dict(stage="acc-check", order=1, metric="mismatch-ratio", dtypes=INTEGERS, op=">", outcome="error",
          otherwise="pass", standard="exact")),
    ("dropout-zero-count", ("acc_check (run_ut)", "dropout outputs", "any"),
     dict(stage="dropout", order=1, metric="zero-count-diff-ratio", dtypes=FLOATS, op="<", outcome="pass",
          otherwise="error", min_numel=100, standard="dropout zeros")),
    # The benchmark method (标杆比对): the target's error against the fp32 reference over the error
    # of the reference model run at the target's dtype (the third side), metric by metric, each
    # error floored at the dtype's minimum error; a ratio above its limit is an ERROR. Inf/NaN
    # where the reference is finite decide first, as in the absolute-threshold method. A benchmark
# row's metric is the worker's metric whose ratio it limits.
    ("benchmark-nan-inf-placement", ("absolute threshold method", "inf/nan consistency", "all float"),
     dict(stage="benchmark", order=0, metric="nan-inf-mismatch", dtypes=FLOATS, op=">", outcome="error",
          standard="nan/inf")),
    ("benchmark-small-value", BENCHMARK_ROW,
     dict(stage="benchmark", order=1, metric="small-value-err-ratio", dtypes=BENCHMARK_DTYPES, op=">",
          outcome="error", parse=r"small_value_err_ratio (\S+)", standard="small-value (benchmark ratio)",
          package=f"{CONFIG}:97 StandardConfig.get_benchmark_ratio_threshold('small_value')")),
    ("benchmark-rmse", BENCHMARK_ROW,
     dict(stage="benchmark", order=2, metric="rmse", dtypes=BENCHMARK_DTYPES, op=">", outcome="error",
          parse=r"L0: max_rel_err \S+, mean_rel_err \S+, rmse (\S+)", standard="rmse (benchmark ratio)",
          package=f"{CONFIG}:155 StandardConfig.get_benchmark_ratio_threshold('rmse', level='L0')")),
    ("benchmark-max-rel", BENCHMARK_ROW,
     dict(stage="benchmark", order=3, metric="max-rel", dtypes=BENCHMARK_DTYPES, op=">", outcome="error",
          parse=r"L0: max_rel_err ([^,]+),", standard="max rel (benchmark ratio)",
          package=f"{CONFIG}:153 StandardConfig.get_benchmark_ratio_threshold('max_rel_err', level='L0')")),
    ("benchmark-mean-rel", BENCHMARK_ROW,
     dict(stage="benchmark", order=4, metric="mean-rel", dtypes=BENCHMARK_DTYPES, op=">", outcome="error",
          parse=r"L0: max_rel_err \S+, mean_rel_err ([^,]+),", standard="mean rel (benchmark ratio)",
          package=f"{CONFIG}:154 StandardConfig.get_benchmark_ratio_threshold('mean_rel_err', level='L0')")),
    # the floor of the dtype's own error in a ratio: |target| / max(|benchmark|, minimum error)
    *[(f"minimum-err-{dtype}", BENCHMARK_ROW,
       dict(stage="definition", order=0, metric="minimum-err", dtypes=[dtype], parse=rf"minimum_err .*{short} ([^,;]+)",
            package=f"{CONFIG}:{line} StandardConfig._minmum_err['torch.{dtype}']"))
      for dtype, short, line in (("float16", "fp16", 122), ("bfloat16", "bf16", 123), ("float32", "fp32", 124))],
    ("rel-err-eps-bfloat16", ("acc_check (run_ut)", "rel_err definition", "all float"),
     dict(stage="definition", order=0, metric="rel-err-eps", dtypes=["bfloat16"], value=2**-8,
          package=f"{CONST}:898 CompareConst.BFLOAT16_EPS")),
    # The small-value domain: reference values at or below these are judged by absolute error
    # (against the atol below), not relative error, and ULP errors are measured only above them.
    *[(f"small-value-{dtype}", SMALL_VALUE_ROW,
       dict(stage="definition", order=0, metric="small-value", dtypes=[dtype], per_dtype=dtype,
            package=f"{CONFIG}:{line} StandardConfig._small_value[torch.{dtype}]"))
      for dtype, line in (("float16", 67), ("bfloat16", 68), ("float32", 69))],
    *[(f"small-value-atol-{dtype}", BENCHMARK_ATOL_ROW,
       dict(stage="definition", order=0, metric="small-value-atol", dtypes=[dtype], per_dtype=dtype,
            package=f"{CONFIG}:{line} StandardConfig._benchmark_small_value_atol[torch.{dtype}]"))
      for dtype, line in (("float16", 79), ("bfloat16", 80), ("float32", 81))],
    # ULP: |target - reference| in units of the reference's last place in the graded dtype,
    # 2**(max(floor(log2|ref|), min exponent) - mantissa bits); errors above `ulp-counted` count.
    *[(f"ulp-{name}-{dtype}", None,
       dict(stage="definition", order=0, metric=f"ulp-{name}", dtypes=[dtype], value=value,
            package=f"{UTILS}:{line} ULP_PARAMETERS[torch.{dtype}]['{key}'][0]"))
      for dtype, name, key, value, line in (
          ("float16", "min-exponent", "min_eb", -14, 108), ("float16", "mantissa-bits", "exponent_num", 10, 111),
          ("bfloat16", "min-exponent", "min_eb", -126, 116), ("bfloat16", "mantissa-bits", "exponent_num", 7, 119),
          ("float32", "min-exponent", "min_eb", -126, 124), ("float32", "mantissa-bits", "exponent_num", 23, 127))],
    ("ulp-counted-float32", ULP32_ROW,
     dict(stage="definition", order=0, metric="ulp-counted", dtypes=["float32"], parse=r"ULP>(\d+) counted",
          package=f"{CONST}:874 CompareConst.ULP_FLOAT32_THRESHOLD")),
    ("ulp-counted-low-precision", ULP16_ROW,
     dict(stage="definition", order=0, metric="ulp-counted", dtypes=LOW_PRECISION, parse=r"ULP>(\d+) counted",
          package=f"{CONST}:875 CompareConst.ULP_FLOAT16_THRESHOLD")),
]

KEY_ORDER = ["id", "stage", "order", "metric", "below", "dtypes", "op", "value", "outcome", "otherwise", "min-numel",
             "standard", "rule", "source", "package"]


def build(data_dir: Path, out_dir: Path) -> list[Path]:
    rows = _read_rows(data_dir / "msprobe" / "msprobe_thresholds.tsv")
    entries = []
    for ident, key, fields in SPECS:
        entry = {"id": ident, **{k.replace("_", "-"): v for k, v in fields.items()
                                 if k not in ("parse", "per_dtype")}}
        if key is None:  # not in the facts: the installed package's value, checked by the tests
            entry["rule"] = f"not in msprobe_thresholds.tsv; the value of {entry['package'].split(' ', 1)[1]}"
            entry["source"] = f"mindstudio-probe {MSPROBE_VERSION} wheel (PyPI): {entry['package']}"
            entries.append(entry)
            continue
        row = rows[key]
        if "below" in entry:  # the row's threshold column is the relative-error cutoff
            assert float(row["threshold"]) == entry["below"], (ident, row["threshold"])
        if "parse" in fields:
            found = re.search(fields["parse"], row["threshold"] + " " + row["rule"])
            assert found, (ident, fields["parse"])
            entry["value"] = _number(found.group(1).strip())
        elif "per_dtype" in fields:
            entry["value"] = _per_dtype(row, fields["per_dtype"])
        elif "value" not in entry:
            entry["value"] = float(row["threshold"])
        entry["rule"] = row["rule"] or f"{key[1]}: {row['threshold']}"
        entry["source"] = f"{row['source']} (via msprobe_thresholds.tsv: {key[0]} / {key[1]})"
        entries.append(entry)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "thresholds.toml"
    path.write_text(_render(entries), encoding="utf-8")
    return [path]


def _per_dtype(row: dict[str, str], dtype: str) -> float:
    """`2**-10 / 2**-10 / 2**-20` under `float16 / bfloat16 / float32`: the entry for `dtype`
    (a parenthesised remark after an entry is dropped)."""
    dtypes = [d.strip() for d in row["dtype"].split("/")]
    values = [re.sub(r"\(.*?\)", "", v).strip() for v in row["threshold"].split("/")]
    assert len(dtypes) == len(values), (row["dtype"], row["threshold"])
    return _number(values[dtypes.index(dtype)])


def _number(text: str) -> float:
    power = re.fullmatch(r"2\*\*(-?\d+)", text)
    return 2.0 ** int(power.group(1)) if power else float(text)


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
