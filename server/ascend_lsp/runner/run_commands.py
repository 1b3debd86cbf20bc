"""`lsp-check run path.py::func`: run a function on a target and grade the delta, for CI.

Exit codes: 0 PASS, 1 WARNING or ERROR, 2 the run itself failed (or bad arguments).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..knowledge.chips import chip_argument
from .job import DEFAULT_TIMEOUT, RUN_TARGETS, Emulation, Job
from .pool import RunnerPool
from .result_text import format_table
from .result import FAILED, PASSED


def build_parser(prog: str = "lsp-check run") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Run a function on a CPU reference and on a target, "
                                                            "and grade the precision delta with msprobe's thresholds.")
    parser.add_argument("spec", help="path.py::function, or path.py with --lines")
    parser.add_argument("--target", choices=RUN_TARGETS, default="npu")
    parser.add_argument("--grad", action="store_true", help="also compare gradients of inputs and parameters")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S")
    parser.add_argument("--interpreter", metavar="PY", help="Python with torch (default: this one)")
    parser.add_argument("--command", metavar="TEMPLATE",
                        help="worker command, e.g. 'ssh host python3 -c {bootstrap_quoted}'")
    parser.add_argument("--lines", metavar="A-B", help="run lines A to B (1-based, inclusive) instead of a function")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fallback-cpu-disable", action="store_true",
                        help="npu: set TORCH_NPU_FALLBACK_CPU_DISABLE=1 so CPU fallbacks raise")
    parser.add_argument("--matmul-hf32", action="store_true", help="emulate: fp32 matmul in HF32 too")
    parser.add_argument("--no-conv-hf32", action="store_true", help="emulate: keep fp32 convolutions in fp32")
    parser.add_argument("--autocast", choices=("float16", "bfloat16"), help="emulate: run under CPU autocast")
    parser.add_argument("--chip", type=chip_argument, metavar="CHIP",
                        help="emulate: what this chip does to numbers (fp16 saturation on 910A/310P, HF32, bf16)")
    parser.add_argument("--mindspore-pair", metavar="NAME", help="mindspore: the port's function name")
    parser.add_argument("--port", metavar="PORT.py", help="mindspore: the file `lsp-check port` wrote (default: "
                                                          "<name>_mindspore.py beside the source, if there)")
    parser.add_argument("--layers", nargs="?", const="module", choices=("module", "api"),
                        help="record every nn.Module (MindSpore: Cell) call on both sides and report the first "
                             "layer that diverges; =api also records torch functions and tensor methods")
    parser.add_argument("--dump", metavar="DIR",
                        help="write both sides in msprobe's dump layout: DIR/bench and DIR/npu (implies --layers)")
    return parser


def compare_dumps_parser(prog: str = "lsp-check compare-dumps") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Compare two msprobe dumps (task \"tensor\") call by "
                                                            "call and report the first layer that diverges.")
    parser.add_argument("bench", help="the bench (GPU or CPU) dump: a dump.json, or a folder holding one")
    parser.add_argument("npu", help="the NPU (or target) dump")
    parser.add_argument("--source", metavar="PATH", help="the model's source file: map calls to its lines")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S")
    parser.add_argument("--interpreter", metavar="PY", help="Python with torch (default: this one)")
    return parser


def main(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    path, _, function = args.spec.partition("::")
    lines = None
    if args.lines:
        try:
            start, end = (int(part) for part in args.lines.split("-"))
        except ValueError:
            print(f"error: --lines wants A-B, got {args.lines!r}", file=sys.stderr)
            return 2
        lines = (start, end)
    if bool(function) == bool(lines):
        print("error: give either path.py::function or path.py --lines A-B", file=sys.stderr)
        return 2
    job = Job(path=path, function=function or None, lines=lines, target=args.target, grad=args.grad,
              seed=args.seed, timeout=args.timeout, interpreter=args.interpreter, command=args.command,
              fallback_cpu_disable=args.fallback_cpu_disable, mindspore_pair=args.mindspore_pair,
              mindspore_port=args.port,
              emulation=Emulation(conv_hf32=not args.no_conv_hf32, matmul_hf32=args.matmul_hf32,
                                  autocast=args.autocast, chip=args.chip),
              layers=args.layers, dump=args.dump)
    return _run_and_print(job, args.json)


def compare_dumps_main(argv: list[str]) -> int:
    parser = compare_dumps_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    job = Job(path=args.source or "", function="compare-dumps", target="dumps", dumps=(args.bench, args.npu),
              timeout=args.timeout, interpreter=args.interpreter)
    return _run_and_print(job, args.json)


def _run_and_print(job: Job, as_json: bool) -> int:
    with RunnerPool() as pool:
        result = pool.run(job)
    print(json.dumps(result.to_dict(), indent=2, default=str) if as_json else format_table(result))
    if result.status == FAILED:
        return 2
    return 0 if result.status == PASSED else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
