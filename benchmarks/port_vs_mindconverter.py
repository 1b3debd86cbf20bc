"""`lsp-check port` against MindConverter 1.7 (AST mode) on the real model files the port tests use.

    python benchmarks/port_vs_mindconverter.py [--json OUT.json] [--open-set] [--mindconverter DIR]

Per model and tool: the conversion rate (what the tool reports as converted over all it
reports), whether the output runs under the installed MindSpore (2.10) on the CPU, and the
precision against torch in eval mode (msprobe's cascade: PASS / WARNING / ERROR, max abs,
cosine). MindConverter converts no weights: its port gets a generous by-name copy (the
names `lsp-check convert-weights` writes, loaded non-strictly); ours gets the converted
checkpoint loaded with strict_load=True, as the port wrote it. MindConverter is installed from PyPI into
benchmarks/.bench/mindconverter on first use (it needs torch, which the test extras have). The
model files are read from their pinned registry packages by tests/port/sources.py (cached in
tests/port/.cache), exactly as the tests read them.

--open-set measures the transformer-era open set (tests/port/models.py OPEN_SET) instead: per file,
the stage our port reaches (`lsp-check port --verify`'s: ported, imports, builds, loads, runs,
PASS), the torch API calls it converts as PaConvert counts them, and MindConverter's rate and
whether its port runs and matches torch (given the by-name copy of the weights).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MINDCONVERTER = HERE / ".bench" / "mindconverter"
sys.path[:0] = [str(REPO), str(REPO / "server")]

from ascend_lsp.port import port_source  # noqa: E402
from ascend_lsp.port.convert_weights import convert_state  # noqa: E402
from tests.port.harness import grade, load_module, run_torch, stage_reached  # noqa: E402
from tests.port.models import MODELS, OPEN_SET  # noqa: E402


def install_mindconverter(folder: Path) -> None:
    if not (folder / "mindconverter").is_dir():
        # --no-deps: its numpy and protobuf pins must not shadow the project's
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(folder),
                        "mindconverter==1.7.0", "networkx==2.5", "decorator", "google-pasta", "yapf", "platformdirs",
                        "six"], check=True)


def run_mindconverter(folder: Path, source: Path, out: Path) -> tuple[Path, float, int, int, str]:
    """MindConverter's port of `source`, its own count of converted / unconverted APIs, and why it
    wrote no port (its report's error line) when it wrote none."""
    code = ("import sys\nfrom mindconverter.cli import cli_entry\n"
            f"sys.argv = ['mindconverter', '--in_file', {str(source)!r}, '--output', {str(out)!r}, "
            f"'--report', {str(out)!r}]\ncli_entry()\n")
    # its own dependencies first, the project's torch and numpy after them
    env = {**os.environ, "PYTHONPATH": str(folder)}
    subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    report = (out / f"report_of_{source.stem}.txt").read_text(encoding="utf-8")
    converted = len(re.findall(r"^line \S+ \[Convert\]", report, re.MULTILINE))
    unconverted = len(re.findall(r"^line \S+ \[UnConvert\]", report, re.MULTILINE))
    total = converted + unconverted
    refused = "" if (out / source.name).is_file() else \
        next((line for line in report.split("\n") if line.startswith("[") and "Convert" not in line), report.strip())
    return out / source.name, converted / total if total else 0.0, converted, unconverted, refused


def evaluate(torch, mindspore, model, source: Path, port: Path, strict: bool) -> dict:
    """Run torch and the port on the same inputs and weights; grade the outputs."""
    import numpy

    arrays = model.inputs(numpy.random.default_rng(0))
    reference, state = run_torch(torch, source, model.build, arrays, model.hidden, model.batch_axis)
    conversion = convert_state({k: v.numpy() for k, v in state.items()}, source.read_text(encoding="utf-8"))
    try:
        net = eval(model.build, vars(load_module(port, f"port_{model.name}_{port.parent.name}")))
        params = {name: mindspore.Parameter(mindspore.Tensor(value), name=name)
                  for name, value in conversion.tensors.items()}
        not_loaded, unused = mindspore.load_param_into_net(net, params, strict_load=strict) if params else ([], [])
        if hasattr(net, "set_train"):  # else a function of the inputs
            net.set_train(False)
        ms_args = [mindspore.Tensor(a) if hasattr(a, "dtype") else a for a in arrays]
        if model.hidden:
            ms_args.append(getattr(net, model.hidden)(ms_args[0].shape[model.batch_axis]))
        out = net(*ms_args)
    except Exception as exc:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return {"runs": False, "error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:160]} "
                                        f"({Path(frame.filename).name}:{frame.lineno})"}
    verdict, reports = grade(torch, reference, out)
    worst = max(reports, key=lambda r: r.get("metrics", {}).get("max_abs", 0.0))
    return {"runs": True, "verdict": verdict, "not_loaded": len(not_loaded), "unused": len(unused),
            "max_abs": worst.get("metrics", {}).get("max_abs"), "cosine": worst.get("metrics", {}).get("cosine"),
            "reason": worst.get("reason", "")}


def port_ours(model, scratch: Path):
    """The model's source written to its own folder under `scratch`, and our port of it beside it in
    `ours/`: (folder, source, PortResult, port)."""
    work = scratch / model.name
    (work / "ours").mkdir(parents=True)
    source = work / f"{model.name}.py"
    source.write_text(model.source(), encoding="utf-8")
    ours = port_source(source.read_text(encoding="utf-8"), str(source))
    our_port = work / "ours" / source.name
    our_port.write_text(ours.text, encoding="utf-8")
    return work, source, ours, our_port


def open_set(torch, mindspore, folder: Path) -> list[dict]:
    """Per open-set file: the stage our port reaches, its calls converted, MindConverter's rate and run."""
    import numpy

    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for model in OPEN_SET:
            work, source, ours, our_port = port_ours(model, Path(scratch))
            stage, why = stage_reached(torch, mindspore, source, our_port, model.build,
                                       model.inputs(numpy.random.default_rng(0)))
            mc_port, mc_rate, mc_converted, mc_unconverted, refused = run_mindconverter(folder, source,
                                                                                        work / "mindconverter")
            mc = {"runs": False, "error": f"no port written: {refused}"} if refused else \
                evaluate(torch, mindspore, model, source, mc_port, strict=False)
            rows.append({"model": model.name, "origin": model.origin, "stage": stage, "why": why,
                         "calls": ours.calls, "rate": ours.rate,
                         "mindconverter": {"rate": mc_rate, "converted": mc_converted,
                                           "needs_person": mc_unconverted, **mc}})
            print(f"{model.name}: {stage}", file=sys.stderr, flush=True)
    print("| file | lsp-check port: stage reached | torch API calls converted | MindConverter 1.7: converted "
          "(rate) | MindConverter's port |")
    print("|---|---|---|---|---|")
    for row in rows:
        converted, total = row["calls"]
        mc = row["mindconverter"]
        runs = (mc.get("verdict") or "runs") if mc["runs"] else f"fails: {mc['error']}"
        stage = row["stage"] + (f" ({row['why'][:120]})" if row["why"] else "")
        print(f"| {row['model']} | {stage} | {converted} of {total} ({converted / total if total else 1:.1%}) | "
              f"{mc['converted']} of {mc['converted'] + mc['needs_person']} ({mc['rate']:.1%}) | {runs[:140]} |")
    passed = sum(row["stage"] == "PASS" for row in rows)
    mc_passed = sum(row["mindconverter"].get("verdict") == "PASS" for row in rows)
    print(f"\nPASS: lsp-check port {passed} of {len(rows)}, MindConverter 1.7 {mc_passed} of {len(rows)}")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    parser.add_argument("--open-set", action="store_true", help="measure the transformer-era open set")
    parser.add_argument("--mindconverter", metavar="DIR", type=Path, default=MINDCONVERTER,
                        help=f"where MindConverter is installed (default: {MINDCONVERTER.relative_to(REPO)})")
    args = parser.parse_args()
    import mindspore
    import torch

    install_mindconverter(args.mindconverter)
    if args.open_set:
        rows = open_set(torch, mindspore, args.mindconverter)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2, default=str), encoding="utf-8")
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for model in MODELS:
            work, source, ours, our_port = port_ours(model, Path(scratch))
            mc_port, mc_rate, mc_converted, mc_unconverted, refused = run_mindconverter(args.mindconverter, source,
                                                                                        work / "mindconverter")
            mc_result = {"runs": False, "error": f"no port written: {refused}"} if refused else \
                evaluate(torch, mindspore, model, source, mc_port, strict=False)
            rows.append({
                "model": model.name, "origin": model.origin,
                "ours": {"rate": ours.rate, "converted": ours.count("converted"),
                         "needs_person": ours.count("manual") + ours.count("unsupported"),
                         **evaluate(torch, mindspore, model, source, our_port, strict=True)},
                "mindconverter": {"rate": mc_rate, "converted": mc_converted, "needs_person": mc_unconverted,
                                  **mc_result},
            })
    print(f"MindSpore {mindspore.__version__} ({mindspore.get_context('device_target')}), torch {torch.__version__}, "
          "MindConverter 1.7.0 (AST mode)\n")
    print("| model | tool | converted | rate | weights | runs | precision (eval) | max abs | cosine |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        for tool in ("ours", "mindconverter"):
            r = row[tool]
            name = "lsp-check port" if tool == "ours" else "MindConverter 1.7"
            precision = r.get("verdict", "—") if r["runs"] else f"fails: {r['error']}"
            numbers = (f"{r['max_abs']:.2e}", f"{r['cosine']:.6f}") if r["runs"] and r.get("max_abs") is not None \
                else ("—", "—")
            weights = "converted, strict load" if tool == "ours" else "none (given a by-name copy)"
            if r["runs"]:
                weights += f": {r['not_loaded']} missing, {r['unused']} unused"
            print(f"| {row['model']} | {name} | {r['converted']} ({r['needs_person']} left) | {r['rate']:.1%} | "
                  f"{weights} | {'yes' if r['runs'] else 'no'} | {precision} | {numbers[0]} | {numbers[1]} |")
    print("\nThe files: " + "; ".join(f"{row['model']}: {row['origin']}" for row in rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str), encoding="utf-8")
    beaten = all(row["ours"].get("verdict") == "PASS" and (row["mindconverter"].get("verdict") != "PASS"
                                                           or row["ours"]["rate"] >= row["mindconverter"]["rate"])
                 for row in rows)
    return 0 if beaten else 1


if __name__ == "__main__":
    raise SystemExit(main())
