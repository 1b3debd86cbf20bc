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
                      "small_value": {"float16": 2**-10, "bfloat16": 2**-10, "float32": 2**-20}}


def test_thresholds_table_matches_its_schema_and_keeps_provenance():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "mappings" / "schema" / "msprobe.json").read_text())
    with open(REPO / "mappings" / "msprobe" / "thresholds.toml", "rb") as f:
        table = tomllib.load(f)
    jsonschema.Draft202012Validator(schema).validate(table)
    assert all(row["source"].startswith("mindstudio-probe 26.2.0") for row in table["threshold"])


def test_client_and_worker_agree_on_the_protocol():
    assert serve.PROTOCOL == PROTOCOL
