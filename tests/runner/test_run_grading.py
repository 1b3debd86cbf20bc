"""The msprobe cascade on synthetic worker reports, and the thresholds table itself."""

import json
import sys
from pathlib import Path

import pytest

from ascend_lsp.knowledge.thresholds import load_thresholds
from ascend_lsp.runner.worker import serve
from ascend_lsp.runner.grading import ERROR, PASS, WARNING, grade_output, metric_parameters
from ascend_lsp.runner.job import PROTOCOL

REPO = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def report(dtype="float32", **metrics):
    base = {"max_abs": 0.0, "max_rel": 0.0, "cosine": 1.0, "nan_inf_mismatch": 0,
            "rel_err_share": {"0.01": 1.0, "0.001": 1.0, "0.0001": 1.0}, "zero_count_diff_ratio": 0.0}
    base.update(metrics)
    return {"path": "out", "kind": "float", "grade_dtype": dtype, "numel": 1000, "metrics": base,
            "reference": {"shape": [10], "dtype": dtype}, "target": {"shape": [10], "dtype": dtype}}


def shares(hundredth, thousandth, ten_thousandth):
    return {"0.01": hundredth, "0.001": thousandth, "0.0001": ten_thousandth}


@pytest.mark.parametrize("case, verdict, decided_by", [
    (report(cosine=0.98, max_abs=0.0001), ERROR, "cosine"),
    (report(max_abs=0.0009), PASS, "max-abs"),
    (report(nan_inf_mismatch=3), ERROR, "nan-inf-placement"),
    (report(max_abs=0.01, rel_err_share=shares(1, 0.99, 0.9)), ERROR, "thousandth-full-precision"),
    (report(max_abs=0.01, rel_err_share=shares(1, 0.9995, 0.999)), WARNING, "ten-thousandth-full-precision"),
    (report(max_abs=0.01, rel_err_share=shares(1, 1, 0.99995)), PASS, "ten-thousandth-full-precision"),
    (report("float16", max_abs=0.01, rel_err_share=shares(0.98, 0.9, 0.9)), ERROR, "hundredth-low-precision"),
    (report("bfloat16", max_abs=0.01, rel_err_share=shares(0.995, 0.99, 0.9)), WARNING, "thousandth-low-precision"),
    (report("float16", max_abs=0.01, rel_err_share=shares(1, 0.9995, 0.9)), PASS, "thousandth-low-precision"),
])
def test_acc_check_cascade(case, verdict, decided_by):
    grade = grade_output(case, load_thresholds())
    assert (grade.verdict, grade.threshold.id) == (verdict, decided_by), grade.reason
    assert grade.decided_by == grade.threshold.standard


def benchmarked(dtype="float16", rmse=1e-3, bench_rmse=1e-3, **metrics):
    """A float16 output whose error is 0.979 hundredth share (ERROR in the acc_check cascade),
    with the third side's metrics: the same error unless told otherwise."""
    errors = {"max_rel": 0.05, "mean_rel": 2e-3, "small_value_err_ratio": 0.1}
    case = report(dtype, max_abs=0.01, rel_err_share=shares(0.979, 0.9, 0.8), rmse=rmse, **{**errors, **metrics})
    case["benchmark"] = {**case["metrics"], **errors, "rmse": bench_rmse, "compared": 1000}
    return case


@pytest.mark.parametrize("case, verdict, decided_by, reason", [
    # what the dtype itself loses is no divergence: the LayerNorm of issue 29
    (benchmarked(), PASS, "benchmark ratio", "within its dtype's own error (float16 benchmark): small value err ratio "
                                             "1, rmse ratio 1, max rel ratio 1, mean rel ratio 1"),
    (benchmarked(rmse=2.5e-3), ERROR, "rmse (benchmark ratio)", "rmse ratio 2.5 > 2"),
    (benchmarked(max_rel=0.6), ERROR, "max rel (benchmark ratio)", "max rel ratio 12 > 10"),
    (benchmarked(small_value_err_ratio=0.3), ERROR, "small-value (benchmark ratio)", "small value err ratio 3 > 2"),
    # an error below the dtype's minimum error (float16: 2**-11) is measured against that floor
    (benchmarked(rmse=2**-12, bench_rmse=0.0), PASS, "benchmark ratio", None),
    (benchmarked(rmse=2**-9, bench_rmse=0.0), ERROR, "rmse (benchmark ratio)", "rmse ratio 4 > 2"),
    (benchmarked("bfloat16", rmse=2**-7, bench_rmse=0.0), PASS, "benchmark ratio", None),  # bfloat16: 2**-8
    # Inf/NaN where the reference is finite decide first, whatever the benchmark lost
    (benchmarked(nan_inf_mismatch=4), ERROR, "nan/inf", "nan inf mismatch 4 > 0"),
])
def test_benchmark_ratios_grade_against_the_dtypes_own_error(case, verdict, decided_by, reason):
    grade = grade_output(case, load_thresholds())
    assert (grade.verdict, grade.decided_by) == (verdict, decided_by), grade.reason
    assert reason is None or grade.reason == reason
    assert grade_output({k: v for k, v in case.items() if k != "benchmark"}, load_thresholds()).verdict == ERROR
    # msprobe's benchmark method has no limits for float64: the acc_check cascade grades
    assert grade_output({**case, "grade_dtype": "float64"}, load_thresholds()).decided_by == \
        ("nan/inf" if case["metrics"]["nan_inf_mismatch"] else "rel err share")
    # a benchmark that overflowed everywhere measures nothing: the acc_check cascade grades
    case["benchmark"].update(compared=0, rmse=None, max_rel=None, mean_rel=None, small_value_err_ratio=None)
    assert grade_output(case, load_thresholds()).decided_by in ("nan/inf", "rel err share")


def test_the_tables_values_are_the_installed_msprobes():
    """Each row read from mindstudio-probe holds the value of its `package` expression there, on
    the line it names."""
    msprobe = pytest.importorskip("msprobe", reason="msprobe (PyPI mindstudio-probe) is not installed")
    import importlib
    import re

    rows = [t for t in load_thresholds() if t.package]
    assert {t.metric for t in rows} >= {"small-value", "small-value-atol", "minimum-err", "ulp-min-exponent",
                                        "ulp-mantissa-bits", "ulp-counted", "rmse", "max-rel", "mean-rel",
                                        "small-value-err-ratio", "rel-err-eps"}
    root = Path(msprobe.__file__).resolve().parent.parent
    for row in rows:
        where, expression = row.package.split(" ", 1)
        file, line = where.rsplit(":", 1)
        module = importlib.import_module(file.removesuffix(".py").replace("/", "."))
        assert eval(expression, vars(module)) == row.value, row.id  # noqa: S307 - the table's own expression
        text = (root / file).read_text(encoding="utf-8").split("\n")[int(line) - 1].split("#")[0]
        assert eval(re.split(r"[:=]", text)[-1].strip(" ,")) == row.value, (row.id, text)  # noqa: S307


def test_integers_must_match_exactly():
    exact = {"path": "i", "kind": "exact", "grade_dtype": "int64", "numel": 4,
             "metrics": {"mismatch": 1, "mismatch_ratio": 0.25, "max_abs": 1.0}}
    assert grade_output(exact, load_thresholds()).verdict == ERROR
    exact["metrics"].update(mismatch=0, mismatch_ratio=0.0)
    assert grade_output(exact, load_thresholds()).verdict == PASS


def test_shape_and_dtype_mismatch_are_errors_with_a_message():
    shape = {"path": "o", "problem": "shape", "reference": {"shape": [2, 3]}, "target": {"shape": [3, 2]}}
    grade = grade_output(shape, load_thresholds())
    assert grade.verdict == ERROR and "[2, 3]" in grade.reason and "[3, 2]" in grade.reason
    dtype = report(max_abs=0.0)
    dtype.update(dtype_mismatch=True, target={"shape": [10], "dtype": "float16"})
    assert grade_output(dtype, load_thresholds()).reason == "dtype mismatch: reference float32 vs target float16"
    assert grade_output(dtype, load_thresholds(), autocast=True).verdict == PASS  # expected under autocast


def test_dropout_outputs_compare_the_zero_share():
    case = dict(report(cosine=0.5, max_abs=3.0), dropout=True)
    case["metrics"]["zero_count_diff_ratio"] = 0.05
    assert grade_output(case, load_thresholds()).verdict == PASS
    case["metrics"]["zero_count_diff_ratio"] = 0.6
    assert grade_output(case, load_thresholds()).verdict == ERROR
    case["numel"] = 50
    assert grade_output(case, load_thresholds()).verdict == WARNING


def test_metric_parameters_come_from_the_table():
    params = metric_parameters(load_thresholds())
    assert params == {"rel_err_cutoffs": [0.01, 0.001, 0.0001], "rel_err_eps": {"bfloat16": 2**-8},
                      "small_value": {"float16": 2**-10, "bfloat16": 2**-10, "float32": 2**-20},
                      "small_value_atol": {"float16": 1e-16, "bfloat16": 1e-16, "float32": 2**-30},
                      "ulp": {"float16": [-14, 10, 1.0], "bfloat16": [-126, 7, 1.0], "float32": [-126, 23, 32.0]}}


def test_thresholds_table_matches_its_schema_and_keeps_provenance():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "mappings" / "schema" / "msprobe.json").read_text())
    with open(REPO / "mappings" / "msprobe" / "thresholds.toml", "rb") as f:
        table = tomllib.load(f)
    jsonschema.Draft202012Validator(schema).validate(table)
    assert all(row["source"].startswith("mindstudio-probe 26.2.0") for row in table["threshold"])


def test_client_and_worker_agree_on_the_protocol():
    assert serve.PROTOCOL == PROTOCOL
