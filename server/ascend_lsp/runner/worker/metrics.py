"""msprobe's metrics of one output against the reference (the client grades them)."""

from __future__ import annotations

from .tensor_values import MISSING, describe_value

def compare_values(torch, path, ref, cand, params: dict, low_precision: bool, full: bool = True) -> dict:
    """`params`: the job's metric parameters (grading.metric_parameters); `low_precision`: a
    float16/bfloat16 target against a float32 reference is measured in its own dtype."""
    report = {"path": path, "reference": describe_value(torch, ref)}
    if cand is MISSING:
        report["problem"] = "missing-target"
        return report
    report["target"] = describe_value(torch, cand)
    if not (isinstance(ref, torch.Tensor) and isinstance(cand, torch.Tensor)):
        report.update(kind="value", equal=(type(ref) is type(cand) and repr(ref) == repr(cand)))
        return report
    if ref.shape != cand.shape:
        report["problem"] = "shape"
        return report
    ref_float, cand_float = ref.is_floating_point(), cand.is_floating_point()
    if ref.dtype != cand.dtype:
        report["dtype_mismatch"] = True
    if not ref_float and not cand_float and not ref.is_complex():
        mismatch = int((ref.to(torch.int64) != cand.to(torch.int64)).sum()) if ref.numel() else 0
        report.update(kind="exact", grade_dtype=report["reference"]["dtype"], numel=ref.numel(),
                      metrics={"mismatch": mismatch, "mismatch_ratio": mismatch / max(ref.numel(), 1),
                               "max_abs": float((ref.double() - cand.double()).abs().max()) if ref.numel() else 0.0})
        return report
    if ref.is_complex() or cand.is_complex():
        ref, cand = torch.view_as_real(ref.resolve_conj()), torch.view_as_real(cand.resolve_conj())
    grade_dtype = cand.dtype if low_precision and cand.dtype in (torch.float16, torch.bfloat16) else ref.dtype
    if not grade_dtype.is_floating_point:
        grade_dtype = torch.float32
    report.update(kind="float", grade_dtype=str(grade_dtype).removeprefix("torch."), numel=ref.numel(),
                  metrics=float_metrics(torch, ref, cand, grade_dtype, params, full))
    return report


def same_values(torch, a, b) -> bool:
    """Two tensors of one dtype and shape with the same bits (NaN included): the third side and an
    emulated target often are, and then share one set of metrics."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point():  # compared as integers of the same width: NaN equals NaN of the same bits
        bits = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        return torch.equal(a.contiguous().view(bits), b.contiguous().view(bits))
    return torch.equal(a, b)


def float_metrics(torch, r, t, grade_dtype, params: dict, full: bool = True) -> dict:
    """msprobe's metrics of `t` against the reference `r`, measured in `grade_dtype`: the acc_check
    ones (cosine, max abs, relative-error shares over every element) and the benchmark method's
    (max and mean relative error and RMSE over the values above the small-value domain, the
    share of small values whose absolute error exceeds the dtype's atol). `full`: also those only
    shown (ULP, error balance) and the zero counts dropout is graded by: the run's outputs; each
    layer's comparison leaves them out, as it is made for every call."""
    cutoffs = params.get("rel_err_cutoffs", [0.01, 0.001, 0.0001])
    dtype = str(grade_dtype).removeprefix("torch.")
    numel = r.numel()
    exact = {"max_abs": 0.0, "max_rel": 0.0, "mean_rel": 0.0, "cosine": 1.0, "rmse": 0.0,
             "small_value_err_ratio": 0.0, "rel_err_share": {format(c, "g"): 1.0 for c in cutoffs},
             **({"eb": 0.0, "ulp_max": 0.0, "ulp_mean": 0.0, "ulp_err_proportion": 0.0} if full else {})}
    zeros = {}
    if full:
        zeros_ref, zeros_target = int((r == 0).sum()), int((t == 0).sum())
        zeros = {"zeros_ref": zeros_ref, "zeros_target": zeros_target,
                 "zero_count_diff_ratio": abs(zeros_target - zeros_ref) / max(numel, 1)}
    if numel and r.dtype == t.dtype and torch.equal(r, t):
        # Bit-identical (so no NaN): decided by comparison, not by a reduction's rounding.
        infinite = int(torch.isinf(r).sum())
        return {**exact, "compared": numel - infinite, "nan_inf_mismatch": 0, "nan_ref": 0, "inf_ref": infinite,
                "nan_target": 0, "inf_target": infinite, **zeros}
    # Errors of float16/bfloat16 values are measured in float32, of wider ones in float64. A finite
    # sum means no Inf/NaN (either would make it one): they are counted only when there are any.
    work = torch.float64 if grade_dtype.itemsize >= 4 else torch.float32
    r, t = r.to(work), t.to(work)
    nan_inf = [0, 0, 0, 0]
    if not bool(torch.isfinite(r.sum())):
        nan_inf[:2] = int(torch.isnan(r).sum()), int(torch.isinf(r).sum())
    if not bool(torch.isfinite(t.sum())):
        nan_inf[2:] = int(torch.isnan(t).sum()), int(torch.isinf(t).sum())
    if any(nan_inf):
        mismatch = int(((torch.isnan(r) != torch.isnan(t)) | (torch.isposinf(r) != torch.isposinf(t)) |
                        (torch.isneginf(r) != torch.isneginf(t))).sum())
        finite = torch.isfinite(r) & torch.isfinite(t)
        rf, tf = r[finite], t[finite]
    else:  # the common case: no mask, no copy
        mismatch, rf, tf = 0, r.reshape(-1), t.reshape(-1)
    counts = {
        "compared": rf.numel(),  # the elements finite on both sides: what every metric below is over
        "nan_inf_mismatch": mismatch,
        "nan_ref": nan_inf[0], "inf_ref": nan_inf[1], "nan_target": nan_inf[2], "inf_target": nan_inf[3],
        **zeros,
    }
    if rf.numel() == 0:  # nothing finite on both sides: no number to show, not a perfect one
        return {**{key: None for key in exact}, "rel_err_share": {format(c, "g"): None for c in cutoffs}, **counts}
    if torch.equal(rf, tf):  # equal where both are finite: decided by comparison, not by a reduction
        return {**exact, **counts}
    diff = (tf - rf).abs_()
    info = torch.finfo(grade_dtype)
    eps = params.get("rel_err_eps", {}).get(dtype, info.eps)
    magnitude = rf.abs()
    small = magnitude <= params.get("small_value", {}).get(dtype, 0.0)
    rel = torch.div(diff, magnitude.add_(eps), out=magnitude)  # fresh buffers cost more than the arithmetic
    small_count = int(torch.count_nonzero(small))
    large_count = rf.numel() - small_count
    flags = torch.empty_like(small)
    shares = {format(c, "g"): int(torch.count_nonzero(torch.lt(rel, c, out=flags))) / rel.numel() for c in cutoffs}
    atol = params.get("small_value_atol", {}).get(dtype, 0.0)
    small_errors = int(torch.count_nonzero(torch.gt(diff, atol, out=flags).logical_and_(small))) if small_count else 0
    max_abs = float(diff.max())
    shown = {}
    if full:
        # error balance, as msprobe counts it: the reference rounded to the graded dtype first
        rounded = rf.to(grade_dtype).to(work) if grade_dtype.itemsize < 8 else rf
        shown["eb"] = abs(int((tf > rounded).sum()) - int((tf < rounded).sum())) / rf.numel()
        shown.update(_ulp(torch, rf, diff, small, large_count, params.get("ulp", {}).get(dtype)))
    if small_count:  # the small values' relative and absolute errors set to 0, in place: by multiplication,
        # as every value is finite here (boolean indexing copies, where and masked_fill cost more)
        large = torch.logical_not(small, out=flags)
        rel.mul_(large)
        diff.mul_(large)
    norm_r, norm_t = rf.norm(), tf.norm()
    if norm_r == 0 and norm_t == 0:
        cosine = 1.0
    elif norm_r == 0 or norm_t == 0:
        cosine = 0.0
    else:
        cosine = float((rf @ tf) / (norm_r * norm_t))
    return {
        "max_abs": max_abs,
        "max_rel": float(rel.max()) if large_count else 0.0,
        "mean_rel": float(rel.sum()) / large_count if large_count else 0.0,
        "cosine": min(cosine, 1.0),
        "rmse": (float(diff @ diff) / large_count) ** 0.5 if large_count else 0.0,
        "small_value_err_ratio": small_errors / small_count if small_count else 0.0,
        "rel_err_share": shares,
        **shown,
        **counts,
    }


def _ulp(torch, rf, diff, small, large_count: int, parameters) -> dict:
    """ULP errors over the values above the small-value domain: |error| in units of the reference's
    last place in the graded dtype, 2**(max(floor(log2|ref|), min exponent) - mantissa bits)."""
    if parameters is None:  # a dtype msprobe gives no ULP parameters for (float64)
        return {"ulp_max": None, "ulp_mean": None, "ulp_err_proportion": None}
    if not large_count:
        return {"ulp_max": 0.0, "ulp_mean": 0.0, "ulp_err_proportion": 0.0}
    min_exponent, mantissa, counted = parameters
    large = ~small
    _, exponent = torch.frexp(rf[large])
    ulp_err = diff[large] / torch.ldexp(torch.ones_like(diff[large]), (exponent - 1).clamp(min=min_exponent) - mantissa)
    return {"ulp_max": float(ulp_err.max()), "ulp_mean": float(ulp_err.mean()),
            "ulp_err_proportion": int((ulp_err > counted).sum()) / rf.numel()}
