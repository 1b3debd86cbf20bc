"""`lsp-check port` and `lsp-check convert-weights`.

Exit codes: 0 everything converted, 1 something needs a person, 2 an error (bad arguments,
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
    args = _parse(parser, argv)
    if isinstance(args, int):
        return args
    if args.output and len(args.sources) > 1:
        print("error: -o names the port of a single source; several sources go beside themselves", file=sys.stderr)
        return EXIT_ERROR
    results, failed = [], False
    for source in args.sources:
        output = Path(args.output) if args.output else default_port_path(source)
        result = _port_file(source, output)
        if result is None:
            failed = True
        else:
            results.append((result, output))
    if args.format == "json":
        totals = {status: sum(r.count(status) for r, _ in results) for status in ("converted", "manual", "unsupported")}
        everything = sum(totals.values())
        report = json.dumps({"files": [r.to_dict() | {"output": str(o)} for r, o in results], **totals,
                             "rate": round(totals["converted"] / everything, 4) if everything else 1.0},
                            indent=2, ensure_ascii=False)
    else:
        report = "\n".join(format_report(r, str(o)) for r, o in results)
    if args.report:
        if not write_output(args.report, (report + "\n").encode("utf-8")):
            return EXIT_ERROR
    elif report:
        print(report)
    if failed:
        return EXIT_ERROR
    return EXIT_DONE if all(r.complete for r, _ in results) else EXIT_MANUAL


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
    lines = [f"{result.path} → {output}: {result.count('converted')} converted, {result.count('manual')} need a "
             f"person, {result.count('unsupported')} unsupported ({result.rate:.1%} converted)"]
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
