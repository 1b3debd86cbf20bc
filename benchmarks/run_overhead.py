"""Round-trip overhead of "Run on NPU": cold start and warm runs of a trivial function.

    PYTHONPATH=server python benchmarks/run_overhead.py [-n 50] [--target cpu]

Prints the cold round trip (worker start + `import torch` + one run) and the warm p50/p95,
each minus the function's own time on both sides (the worker reports it). Budget: warm
≤ 300 ms beyond the function's own time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from ascend_lsp.runner import Job, RunnerPool  # noqa: E402
from speed_doc import record  # noqa: E402

SNIPPET = """
import torch

def trivial():
    return torch.ones(4, 4) @ torch.ones(4, 4)
"""
BUDGET_MS = 300


def overhead(result) -> float:
    own = result.timing.get("reference_s", 0) + result.timing.get("target_s", 0)
    return result.timing["round_trip_s"] - own


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=50, help="warm runs")
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--interpreter", default=sys.executable)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, RunnerPool(default_interpreter=args.interpreter) as pool:
        path = Path(folder) / "trivial.py"
        path.write_text(SNIPPET)
        job = Job(path=str(path), function="trivial", target=args.target)
        started = time.perf_counter()
        cold = pool.run(job)
        if not cold.ok:
            print(f"cold run failed: {cold.message}", file=sys.stderr)
            return 2
        print(f"cold: {time.perf_counter() - started:.2f} s round trip "
              f"(torch import {cold.worker['torch_import_s']:.2f} s, overhead {overhead(cold):.2f} s)")
        warm = sorted(overhead(pool.run(job)) * 1000 for _ in range(args.n))
    p50 = statistics.median(warm)
    p95 = warm[min(len(warm) - 1, round(0.95 * (len(warm) - 1)))]
    print(f"warm over {args.n} runs, minus the function's own time: p50 {p50:.1f} ms, p95 {p95:.1f} ms "
          f"(budget {BUDGET_MS} ms)")
    record("run", f"p95 {p95:.1f} ms")
    return 0 if p95 <= BUDGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
