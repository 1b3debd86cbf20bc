"""RunResult as text: a Markdown hover, a one-line summary, a plain table for the terminal."""

from __future__ import annotations

from .layers import LayerResult
from .result import FAILED, OutputResult, RunResult

LAYER_COLUMNS = ("#", "module", "class", "call", "verdict", "inputs", "max abs", "cosine", "built at", "decided by",
                 "reason")
LAYER_ROWS = 40  # a longer list shows the calls that do not pass, and the first divergence
COLUMNS = ("output", "shape", "dtype", "max abs", "max rel", "cosine", "<1‰", "<1‱", "ULP max/mean", "verdict",
           "decided by")


def format_summary(result: RunResult) -> str:
    """One line for a diagnostic message or the output log."""
    where = f"{result.target}{' (emulated)' if result.emulated else ''}"
    head = "Compare msprobe dumps" if result.target == "dumps" else f"Run on {where} {result.entry}"
    if result.status == FAILED:
        return f"{head}: failed: {result.message}"
    seconds = result.timing.get("round_trip_s")
    return f"{head}: {result.message.removeprefix('[emulated] ')}" + (f" [{seconds:.2f} s]" if seconds else "")


def format_markdown(result: RunResult) -> str:
    """The hover: verdict, emulation caveats, a table per output, notes, or the traceback."""
    device = f" on `{result.device}`" if result.device else ""
    lines = [f"**Run on NPU** `{result.entry}` → target `{result.target}`{device}: **{_status(result)}**", ""]
    if result.emulated:
        lines += ["_Emulated on the CPU, not measured on an NPU._", ""]
    if result.status == FAILED:
        lines += [_escape(result.message), ""]
        if result.error and result.error.get("traceback"):
            lines += ["```", result.error["traceback"].rstrip(), "```", ""]
    else:
        lines += [_escape(result.message), ""]
        if result.outputs:
            lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
            lines += ["| " + " | ".join(_escape(c) for c in _cells(o)) + " |" for o in result.outputs]
            lines.append("")
        if result.layers:
            rows, hidden = _layer_rows(result)
            lines += ["**Layers** (execution order)", "", "| " + " | ".join(LAYER_COLUMNS) + " |",
                      "|" + "---|" * len(LAYER_COLUMNS)]
            lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in rows]
            lines += [f"_{hidden} passing calls not shown._" if hidden else "", ""]
    lines += [f"- {_escape(note)}" for note in result.notes]
    return "\n".join(lines).rstrip() + "\n"


def format_table(result: RunResult) -> str:
    """Plain text for `lsp-check run`."""
    lines = [format_summary(result)]
    if result.status == FAILED:
        if result.error and result.error.get("traceback"):
            lines += ["", result.error["traceback"].rstrip()]
    elif result.outputs:
        rows = [COLUMNS] + [_cells(o) for o in result.outputs]
        widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
        lines.append("")
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    if result.status != FAILED and result.layers:
        layer_rows, hidden = _layer_rows(result)
        rows = [LAYER_COLUMNS] + layer_rows
        widths = [max(len(row[i]) for row in rows) for i in range(len(LAYER_COLUMNS))]
        lines.append("")
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        if hidden:
            lines.append(f"({hidden} passing calls not shown)")
    if result.emulated:
        lines += ["", "emulated on the CPU, not measured on an NPU"]
    lines += [f"note: {note}" for note in result.notes]
    return "\n".join(lines)


def _layer_rows(result: RunResult) -> tuple[list[tuple[str, ...]], int]:
    layers = result.layers or []
    marks: dict[int, str] = {}
    for index, label in ((result.first_overflow, "first overflow"), (result.first_divergence, "first divergence"),
                         (result.first_warning, "first warning")):
        if index is not None:
            marks[index] = f"{marks[index]}, {label}" if index in marks else label
    shown = [i for i, layer in enumerate(layers)
             if len(layers) <= LAYER_ROWS or layer.verdict != "PASS" or i in marks]
    return [_layer_cells(i, layers[i], marks.get(i)) for i in shown], len(layers) - len(shown)


def _layer_cells(index: int, layer: LayerResult, mark: str | None) -> tuple[str, ...]:
    m = layer.metrics
    built = f"line {layer.source['line']}" if layer.source else "–"
    name = ("  " * layer.depth) + (layer.module or "(root)")
    cls = layer.cls or "–"
    if layer.target_class:
        cls = f"{cls} ≙ {layer.target_class}"
    verdict = f"{layer.verdict} ← {mark}" if mark else layer.verdict
    return (str(index), name, cls, str(layer.call), verdict, layer.input_verdict, _num(m.get("max_abs")),
            _num(m.get("cosine"), 6), built, layer.decided_by or "–", layer.reason)


def _status(result: RunResult) -> str:
    return "failed" if result.status == FAILED else result.verdict


def _cells(o: OutputResult) -> tuple[str, ...]:
    m = o.metrics
    shares = m.get("rel_err_share", {})
    shape = _pair(o.reference.get("shape"), o.target.get("shape"))
    dtype = _pair(o.reference.get("dtype"), o.target.get("dtype"))
    ulp = f"{_num(m.get('ulp_max'))}/{_num(m.get('ulp_mean'))}" if "ulp_max" in m else "–"
    return (o.path, shape, dtype, _num(m.get("max_abs")), _num(m.get("max_rel")), _num(m.get("cosine"), 6),
            _share(shares.get("0.001")), _share(shares.get("0.0001")), ulp, o.verdict, o.decided_by or o.reason)


def _pair(reference, target) -> str:
    if reference is None and target is None:
        return "–"
    text = lambda v: "x".join(map(str, v)) or "scalar" if isinstance(v, list) else str(v)  # noqa: E731
    return text(reference) if reference == target else f"{text(reference)} ≠ {text(target)}"


def _num(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}g}"


def _share(value) -> str:
    return "–" if value is None else f"{value:.2%}"


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|")
