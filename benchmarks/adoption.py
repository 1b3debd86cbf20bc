"""Time the adoption commands on the transformers 5.23.0 sources (the corpus of
cli_corpus.py): the migration report, writing a baseline, and a baseline-filtered run.

    python benchmarks/adoption.py [--jobs N]

Each is timed cold (no result cache) and warm (unchanged files, cached). The report
re-walks every file for its API references on top of the check, so a cold report costs
more than a cold check; warm, both come from the cache.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cli_corpus import SCRATCH, setup
from speed_doc import record

OUT = SCRATCH / "adoption"


def lsp_check(root: Path, env: dict, jobs: int | None, *args: str) -> float:
    exe = shutil.which("lsp-check", path=str(Path(sys.executable).parent)) or "lsp-check"
    cmd = [exe, *args] + (["--jobs", str(jobs)] if jobs else [])
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall


def main() -> int:
    args, root, files, lines, env = setup(__doc__)
    env.pop("PRE_COMMIT", None)
    OUT.mkdir(exist_ok=True)
    cache = root / ".lsp-check-cache"
    baseline = OUT / "baseline.json"

    def run(*command: str) -> float:
        return lsp_check(root, env, args.jobs, *command)

    def cold(*command: str) -> float:
        shutil.rmtree(cache, ignore_errors=True)
        return run(*command)

    report = ("report", "transformers", "--exit-zero")
    times = {
        "report cold (html)": cold(*report, "-o", str(OUT / "report.html")),
        "report warm (html)": run(*report, "-o", str(OUT / "report.html")),
        "report warm (json)": run(*report, "-o", str(OUT / "report.json")),
        "write baseline cold": cold("transformers", "--write-baseline", str(baseline)),
        "baseline run warm": run("transformers", "--baseline", str(baseline), "-q"),
        "baseline run cold": cold("transformers", "--baseline", str(baseline), "-q"),
        "check cold (for scale)": cold("transformers", "--exit-zero", "-q"),
    }
    new = subprocess.run([shutil.which("lsp-check", path=str(Path(sys.executable).parent)) or "lsp-check",
                          "transformers", "--baseline", str(baseline), "--output-format", "json"],
                         cwd=root, env=env, capture_output=True, text=True)
    totals = json.loads((OUT / "report.json").read_text())["totals"]
    entries = json.loads(baseline.read_text())["findings"]
    print(f"corpus     transformers 5.23.0: {files} files, {lines} lines (cores: {os.cpu_count()})")
    print(f"report     {totals['references']} API references, {totals['findings']} findings, "
          f"{(OUT / 'report.html').stat().st_size / 1e6:.1f} MB of HTML")
    print(f"baseline   {sum(e['count'] for e in entries)} findings in {len(entries)} entries, "
          f"{baseline.stat().st_size / 1e3:.0f} kB; new findings against it: {len(json.loads(new.stdout))}")
    for name, wall in times.items():
        print(f"{name:<24} {wall:6.2f} s  ({lines / wall:,.0f} lines/s)")
    record("report", f"{times['report cold (html)']:.1f} s / {times['report warm (html)']:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
