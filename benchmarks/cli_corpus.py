"""Time `lsp-check` over a real corpus: the sources of the transformers 5.23.0 wheel.

    python benchmarks/cli_corpus.py [--jobs N] [--keep]

Downloads the wheel (pure Python, ~1.2 M lines, full of CUDA-specific code) into
benchmarks/.bench/, then runs lsp-check cold (empty result cache) and warm (unchanged
files), and prints lines, files, findings, wall seconds, lines/s and peak RSS.
Budget (DESIGN.md): under 30 s cold and 3 s warm on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from speed_doc import record

HERE = Path(__file__).resolve().parent
SCRATCH = HERE / ".bench"
WHEEL = "transformers==5.23.0"


def corpus() -> Path:
    target = SCRATCH / "transformers-5.23.0"
    if (target / "transformers").is_dir():
        return target
    SCRATCH.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d",
                    str(SCRATCH), WHEEL], check=True)
    wheel = next(SCRATCH.glob("transformers-5.23.0-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def count_lines(root: Path) -> tuple[int, int]:
    files = lines = 0
    for path in root.rglob("*.py"):
        files += 1
        with open(path, "rb") as handle:
            lines += sum(1 for _ in handle)
    return files, lines


def run(root: Path, jobs: int | None, env: dict) -> tuple[float, int, int]:
    exe = shutil.which("lsp-check", path=str(Path(sys.executable).parent)) or shutil.which("lsp-check") or "lsp-check"
    cmd = [exe, "transformers", "--output-format", "json", "-o",
           str(SCRATCH / "findings.json"), "--exit-zero"]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"lsp-check failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    findings = len(json.loads((SCRATCH / "findings.json").read_text()))
    peak = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
    return wall, findings, peak


def setup(doc: str) -> tuple[argparse.Namespace, Path, int, int, dict]:
    """Arguments, the corpus, its size, and the environment the timed runs get."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args()
    root = corpus()
    files, lines = count_lines(root / "transformers")
    return args, root, files, lines, {**os.environ, "ASCEND_LSP_CACHE_DIR": str(SCRATCH / "table-cache")}


def main() -> int:
    args, root, files, lines, env = setup(__doc__)
    shutil.rmtree(root / ".lsp-check-cache", ignore_errors=True)
    cold, findings, peak = run(root, args.jobs, env)
    warm, warm_findings, _ = run(root, args.jobs, env)
    assert warm_findings == findings, (warm_findings, findings)
    print(f"corpus     transformers 5.23.0: {files} files, {lines} lines (cores: {os.cpu_count()})")
    print(f"findings   {findings}")
    print(f"cold       {cold:.2f} s  ({lines / cold:,.0f} lines/s)   budget 30 s")
    print(f"warm       {warm:.2f} s  ({lines / warm:,.0f} lines/s)   budget 3 s")
    print(f"peak RSS   {peak / 1024:.0f} MiB (largest process)")
    record("cli", f"{cold:.1f} s / {warm:.1f} s")
    return 0 if cold < 30 and warm < 3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
