"""`lsp-check port` and `lsp-check convert-weights`.

Exit codes: 0 everything converted (and with --verify, the port matches its source), 1 something
needs a person (or the verification stops before PASS), 2 an error (bad arguments,
a file that does not parse, is nested too deeply to port or cannot be read, an output that
cannot be written, a port that crashed or ran out of time or memory, libcst / torch /
mindspore missing).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import PORT_SUFFIX, PortError, PortUnavailable, default_port_path, port_source
from .verify import INPUT_FORMS, STAGES, parse_input
from ..safe_write import WriteRefused, writable_target, write_file
from ..sources import SourceError, read_regular

EXIT_DONE, EXIT_MANUAL, EXIT_ERROR = 0, 1, 2


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace | int:
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_DONE if exc.code == 0 else EXIT_ERROR


def port_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="lsp-check port", description="Port PyTorch files to MindSpore: a structural rewrite that keeps "
        "formatting and comments, and marks (# MS301 / # MS302) what needs a person.",
        epilog="Exit status: 0 everything converted, 1 something needs a person, 2 error.")
    parser.add_argument("sources", nargs="+", metavar="SRC.py", help="the PyTorch .py files")
    parser.add_argument("--to", choices=("mindspore",), default="mindspore", help="the target framework")
    parser.add_argument("-o", "--output", help=f"the port of a single source (default: beside each source, "
                                               f"<name>{PORT_SUFFIX}.py)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="the report's format")
    parser.add_argument("--report", metavar="PATH", help="write the report here instead of stdout")
    parser.add_argument("--verify", metavar="EXPR", help="check the port: the model EXPR builds (e.g. \"Net()\") "
                        "runs in the source and in the port on the --input arrays, with torch's initial weights "
                        "converted to <output>.ckpt and loaded strictly; the outputs graded with msprobe's "
                        "thresholds (needs torch and mindspore)")
    parser.add_argument("--input", action="append", default=[], metavar="SPEC",
                        help=f"an input of --verify, in order: {INPUT_FORMS}")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    if args.output and len(args.sources) > 1:
        print("error: -o names the port of a single source; several sources go beside themselves", file=sys.stderr)
        return EXIT_ERROR
    if (args.verify is None) != (not args.input) or args.verify is not None and len(args.sources) > 1:
        print("error: --verify EXPR checks the port of a single source and needs at least one --input",
              file=sys.stderr)
        return EXIT_ERROR
    try:
        draws = [parse_input(text) for text in args.input]
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    results, failed = [], False
    for source in args.sources:
        output = Path(args.output) if args.output else default_port_path(source)
        result = _port_file(source, output)
        if result is None:
            failed = True
        else:
            results.append((result, output))
    verification = None
    if args.verify is not None and results:
        verification = _verify(Path(args.sources[0]), results[0][1], args.verify, args.input, draws)
        if verification is None:
            return EXIT_ERROR
    if args.format == "json":
        totals = {status: sum(r.count(status) for r, _ in results) for status in ("converted", "manual", "unsupported")}
        everything = sum(totals.values())
        calls = [sum(r.calls[i] for r, _ in results) for i in (0, 1)]
        files = [r.to_dict() | {"output": str(o)} for r, o in results]
        if verification is not None:
            files[0]["verify"] = verification.to_dict()
        report = json.dumps({"files": files, **totals,
                             "rate": round(totals["converted"] / everything, 4) if everything else 1.0,
                             "calls": {"converted": calls[0], "total": calls[1],
                                       "rate": round(calls[0] / calls[1], 4) if calls[1] else 1.0}},
                            indent=2, ensure_ascii=False)
    else:
        report = "\n".join(format_report(r, str(o)) for r, o in results)
        if verification is not None:
            report += "\n" + format_verification(verification, args.verify)
    if args.report:
        if not write_output(args.report, (report + "\n").encode("utf-8")):
            return EXIT_ERROR
    elif report:
        print(report)
    if failed:
        return EXIT_ERROR
    if verification is not None and verification.stage != "PASS":
        return EXIT_MANUAL
    return EXIT_DONE if all(r.complete for r, _ in results) else EXIT_MANUAL


def _verify(source: Path, output: Path, build: str, inputs: list[str], draws: list):
    """The verification of the port at `output` (None after saying why it could not run)."""
    try:
        import mindspore
        import numpy
        import torch
    except ModuleNotFoundError as exc:
        print(f"error: --verify needs torch and mindspore: {exc}", file=sys.stderr)
        return None
    from .verify import first_divergence, verify

    rng = numpy.random.default_rng(0)
    arrays = [draw(rng) for draw in draws]
    checkpoint = output.with_suffix(".ckpt")
    try:
        writable_target(str(checkpoint))
        result = verify(torch, mindspore, source, output, build, arrays, checkpoint)
    except WriteRefused as exc:
        print(f"error: {checkpoint}: {exc}", file=sys.stderr)
        return None
    except Exception as exc:  # noqa: BLE001 - the source itself does not run: the user's to see
        print(f"error: {source}: {build} does not run with torch: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    if result.stage == "runs":  # the port runs but does not match: where does it start to differ?
        result.first_divergence = first_divergence(source, output, build, inputs)
    return result


def format_verification(result, build: str) -> str:
    lines = [f"verify {build}: " + ("PASS" if result.stage == "PASS" else
                                    f"stops after `{result.stage}` ({' → '.join(STAGES)}): {result.reason}")]
    weights = result.weights
    if weights:
        lines.append(f"  weights → {result.checkpoint or 'nothing to convert'}: {weights['tensors']} tensors, "
                     f"{len(weights['renamed'])} renamed or reshaped, {len(weights['dropped'])} dropped, "
                     f"{len(weights['unmapped'])} could not be mapped")
    for output in result.outputs:
        metrics = output.get("metrics", {})
        lines.append(f"  {output['path']}: {output['verdict']}: {output.get('reason', '')}"
                     + (f" (max abs {metrics['max_abs']:.3g}, cosine {metrics['cosine']:.6f})"
                        if "max_abs" in metrics and "cosine" in metrics else ""))
    divergence = result.first_divergence
    if divergence:
        where = divergence.get("source") or {}
        lines.append(f"  first diverging layer: {divergence['module']} ({divergence.get('class')}"
                     + (f", built at line {where['line']}" if where.get("line") else "") + f"): {divergence['reason']}")
    elif result.stage == "runs":
        lines.append("  the layer comparison found no single layer that diverges first")
    return "\n".join(lines)


def _port_file(source: str, output: Path):
    """The port of one file, written to `output`; None (after saying why) when it cannot be made."""
    try:
        text = read_regular(source)[0].decode("utf-8")
    except SourceError as exc:
        print(f"error: {source}: {exc}", file=sys.stderr)
        return None
    except UnicodeDecodeError as exc:
        print(f"error: {source}: not valid utf-8 text ({exc.reason} at byte {exc.start})", file=sys.stderr)
        return None
    if output.resolve() == Path(source).resolve():
        print(f"error: the port of {source} would overwrite it; pass another -o", file=sys.stderr)
        return None
    try:
        result = port_source(text, source)
    except PortUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    except PortError as exc:
        print(f"error: {source}: {exc}", file=sys.stderr)
        return None
    return result if write_output(str(output), result.text.encode("utf-8")) else None


def format_report(result, output: str) -> str:
    converted, total = result.calls
    lines = [f"{result.path} → {output}: {result.count('converted')} converted, {result.count('manual')} need a "
             f"person, {result.count('unsupported')} unsupported ({result.rate:.1%} converted; torch API calls: "
             f"{converted} of {total} converted, {converted / total if total else 1.0:.1%})"]
    for item in result.items:
        if item.status != "converted":
            lines.append(f"  {result.path}:{item.line}: {item.code} {item.what}")
    return "\n".join(lines)


def write_output(path: str, data: bytes) -> bool:
    """Write a port or a report; False after saying why it was refused."""
    try:
        write_file(path, data)
    except WriteRefused as exc:
        print(f"error: {path}: {exc}", file=sys.stderr)
        return False
    return True


def convert_weights_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="lsp-check convert-weights",
        description="Convert a PyTorch state dict (.pth) into a MindSpore checkpoint for the port of --source, "
                    "with the names and layouts of mappings/mindspore/weights.toml.",
        epilog="Exit status: 0 every tensor mapped, 1 some tensor could not be mapped, 2 error.")
    parser.add_argument("weights", help="the .pth file: a state dict, or a checkpoint dict holding one")
    parser.add_argument("-o", "--output", required=True, help="the MindSpore .ckpt to write")
    parser.add_argument("--source", required=True, help="the PyTorch model file the port was made from")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    from .convert_weights import convert_file

    try:  # before the work: a device, a link or a missing folder is refused now, not after
        writable_target(args.output)
    except WriteRefused as exc:
        print(f"error: {args.output}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        conversion = convert_file(args.weights, args.output, args.source)
    except ModuleNotFoundError as exc:
        print(f"error: convert-weights needs torch and mindspore: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except WriteRefused as exc:
        print(f"error: {args.output}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except (OSError, ValueError, SyntaxError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if args.json:
        print(json.dumps(conversion.to_dict(), indent=2))
    else:
        print(f"{args.weights} → {args.output}: {len(conversion.tensors)} tensors written, "
              f"{len(conversion.renamed)} renamed or reshaped, {len(conversion.dropped)} dropped, "
              f"{len(conversion.unmapped)} could not be mapped")
        for torch_name, ms_name, why in conversion.renamed:
            print(f"  {torch_name} → {ms_name}  ({why})")
        for torch_name, why in conversion.dropped:
            print(f"  dropped {torch_name}: {why}")
        for torch_name, why in conversion.unmapped:
            print(f"  NOT MAPPED {torch_name}: {why}")
    return EXIT_MANUAL if conversion.unmapped else EXIT_DONE
