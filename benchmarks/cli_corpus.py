"""Time `lsp-check` over a real corpus: the sources of the transformers 5.23.0 wheel.

    python benchmarks/cli_corpus.py [--jobs N] [--rounds N] [--cost-of CODES]

Downloads the wheel (pure Python, ~1.2 M lines, full of CUDA-specific code) into
benchmarks/.bench/, then runs lsp-check cold (empty result cache), each time followed by
`ruff check --select ALL --no-cache` over the same files (if ruff is installed) and by the
floor of any AST checker (a Python process that reads and `ast.parse`s every file, one
process per core) and that floor with a bare visit of every node added (the least any checker
that looks at every node in Python spends), `--rounds` times, then warm (unchanged files), and prints lines, files,
findings, wall and CPU seconds (the lowest of the rounds), lines/s, the cold run's ratios to
the floor (wall, CPU, and CPU within each round) and peak RSS. Wall times on a shared or virtual machine move by ±20 % from one run
to the next: alternating rounds let the three meet the same state.
Budget (DESIGN.md): cold no slower than ruff (and under 30 s), aiming at 1.5x the floor;
warm under 0.4 s; on 2 cores.
Wall time is what a user waits; CPU time is what to compare on a machine other jobs share.
`--cost-of NPU6,NPU7` also times pairs of cold runs with those codes ignored and with them
(the lowest of each kind counts), and prints what the codes cost and how far the pairs spread.
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
    """The unpacked sources, a project of their own: a checkout of transformers has its
    pyproject.toml at the top, and without one its files would belong to the project this
    folder is in (this repository), whose files the project-wide reading would scan instead."""
    target = SCRATCH / "transformers-5.23.0"
    if not (target / "transformers").is_dir():
        SCRATCH.mkdir(exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d",
                        str(SCRATCH), WHEEL], check=True)
        wheel = next(SCRATCH.glob("transformers-5.23.0-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(target)
    marker = target / "pyproject.toml"
    if not marker.exists():
        marker.write_text('[project]\nname = "transformers"\nversion = "5.23.0"\n')
    return target


def count_lines(root: Path) -> tuple[int, int]:
    files = lines = 0
    for path in root.rglob("*.py"):
        files += 1
        with open(path, "rb") as handle:
            lines += sum(1 for _ in handle)
    return files, lines


def timed(cmd: list[str], root: Path, env: dict) -> tuple[subprocess.CompletedProcess, float, float]:
    """The finished process, its wall seconds and the CPU seconds of it and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def ruff(root: Path, env: dict) -> tuple[float, float] | None:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        return None
    _, wall, cpu = timed([exe, "check", "--select", "ALL", "--no-cache", "--exit-zero", "--quiet", "transformers"],
                         root, env)
    return wall, cpu


# Read and parse every file of the folder, one process per core, in chunks as lsp-check does;
# with "visit", also visit every node the quickest way Python can (a stack, and per node type only
# the fields that can hold nodes), doing nothing at each.
FLOOR = """
import ast, os, sys
from multiprocessing import Pool

VISIT = sys.argv[2:] == ["visit"]
FIELDS = {}


def visit(tree):
    stack = [tree]
    while stack:
        node = stack.pop()
        kind = type(node)
        fields = FIELDS.get(kind)
        if fields is None:
            fields = FIELDS[kind] = [f for f in kind._fields if f not in ("ctx", "op", "type_comment")]
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)


def parse(paths):
    for path in paths:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
        if VISIT:
            visit(tree)
    return len(paths)


if __name__ == "__main__":
    paths = sorted(os.path.join(folder, name) for folder, _, names in os.walk(sys.argv[1])
                   for name in names if name.endswith(".py"))
    with Pool(os.cpu_count()) as pool:
        sum(pool.imap_unordered(parse, [paths[i:i + 8] for i in range(0, len(paths), 8)]))
"""


def ast_floor(root: Path, env: dict, visit: bool = False) -> tuple[float, float]:
    proc, wall, cpu = timed([sys.executable, "-c", FLOOR, "transformers", *(["visit"] if visit else [])], root, env)
    if proc.returncode != 0:
        sys.exit(f"the AST floor failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, cpu


def run(root: Path, jobs: int | None, env: dict, ignore: str = "") -> tuple[float, float, int, int]:
    exe = shutil.which("lsp-check", path=str(Path(sys.executable).parent)) or shutil.which("lsp-check") or "lsp-check"
    cmd = [exe, "transformers", "--output-format", "json", "-o",
           str(SCRATCH / "findings.json"), "--exit-zero"]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    if ignore:
        cmd += ["--ignore", ignore]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc, wall, cpu = timed(cmd, root, env)
    if proc.returncode != 0:
        sys.exit(f"lsp-check failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    findings = len(json.loads((SCRATCH / "findings.json").read_text()))
    peak = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
    return wall, cpu, findings, peak


def setup(doc: str) -> tuple[argparse.Namespace, Path, int, int, dict]:
    """Arguments, the corpus, its size, and the environment the timed runs get."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=3,
                        help="cold runs, each followed by a ruff run; the lowest of each counts (default 3)")
    parser.add_argument("--cost-of", default="", metavar="CODES",
                        help="also time cold runs without these comma-separated codes or prefixes")
    args = parser.parse_args()
    root = corpus()
    files, lines = count_lines(root / "transformers")
    # as a user runs it: Python keeps the bytecode of what it imports (written by the first run), which
    # PYTHONDONTWRITEBYTECODE in this environment would have every run compile again
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return args, root, files, lines, {**env, "ASCEND_LSP_CACHE_DIR": str(SCRATCH / "table-cache")}


def main() -> int:
    args, root, files, lines, env = setup(__doc__)
    colds, floors, parses, visits, warms, peak = [], [], [], [], [], 0
    for _ in range(args.rounds):  # alternating, so the three meet the same state of a shared machine
        shutil.rmtree(root / ".lsp-check-cache", ignore_errors=True)
        wall, cpu, findings, largest = run(root, args.jobs, env)
        peak = peak or largest  # the first run's: the children's peak includes ruff's after that
        colds.append((wall, cpu))
        floor = ruff(root, env)
        if floor is not None:
            floors.append(floor)
        parses.append(ast_floor(root, env))
        visits.append(ast_floor(root, env, visit=True))
        warm, _, warm_findings, _ = run(root, args.jobs, env)
        assert warm_findings == findings, (warm_findings, findings)
        warms.append(warm)
    # each figure the lowest of its runs; the CPU ratio is the one to compare on a machine other
    # jobs share (their load moves wall times by a factor, CPU times by a fraction of that)
    cold, cold_cpu = min(wall for wall, _ in colds), min(cpu for _, cpu in colds)
    parse, parse_cpu = min(wall for wall, _ in parses), min(cpu for _, cpu in parses)
    visit_cpu = min(cpu for _, cpu in visits)
    per_round = ", ".join(f"{c / p:.2f}x" for (_, c), (_, p) in zip(colds, parses))
    warm = min(warms)
    lowest = f"lowest of {args.rounds} runs" if args.rounds > 1 else "one run"
    print(f"corpus     transformers 5.23.0: {files} files, {lines} lines (cores: {os.cpu_count()})")
    print(f"findings   {findings}")
    print(f"cold       {cold:.2f} s wall, {cold_cpu:.2f} s CPU  ({lines / cold:,.0f} lines/s, {lowest})   budget 30 s")
    print(f"warm       {warm:.2f} s  ({lines / warm:,.0f} lines/s, {lowest})   budget 0.4 s")
    print(f"AST floor  {parse:.2f} s wall, {parse_cpu:.2f} s CPU  (read + ast.parse, one process per core, {lowest}); "
          f"cold / floor {cold / parse:.2f}x wall, {cold_cpu / parse_cpu:.2f}x CPU (each round's: {per_round})   "
          "aim 1.5x")
    print(f"visit      {visit_cpu:.2f} s CPU  (the floor and a bare visit of every node, {lowest}): "
          f"{visit_cpu / parse_cpu:.2f}x the floor's CPU")
    if floors:
        floor = min(floors)
        print(f"ruff       {floor[0]:.2f} s wall, {floor[1]:.2f} s CPU  (ruff check --select ALL, {lowest}, "
              "alternating with the cold runs)")
    print(f"peak RSS   {peak / 1024:.0f} MiB (largest process)")
    if args.cost_of:
        cost_of(root, args, env)
    versus = f"; ruff --select ALL {floor[0]:.1f} s" if floors else ""
    record("cli", f"{cold:.1f} s / {warm:.2f} s; AST floor {parse:.1f} s (cold {cold / parse:.2f}x; CPU {cold_cpu:.1f} s "
                  f"against {parse_cpu:.1f} s, {cold_cpu / parse_cpu:.2f}x; a bare visit of every node adds "
                  f"{visit_cpu / parse_cpu - 1:.2f}x){versus}, {lowest} each")
    slower_than_ruff = bool(floors) and cold > floor[0]
    return 0 if cold < 30 and warm < 0.4 and not slower_than_ruff else 1


def cost_of(root: Path, args: argparse.Namespace, env: dict) -> None:
    """Pairs of cold runs, one without `args.cost_of` and one with everything, in turn first
    (a machine can favour the first or the second run of a pair); both start from an empty
    result cache and write it, so they differ in the codes alone. The cost is that of the
    lowest of each kind; the differences within the pairs show how far the machine moves the
    figure (when they straddle zero, it cannot see the cost)."""
    without: list[tuple[float, float]] = []
    full: list[tuple[float, float]] = []
    for index in range(max(args.rounds, 2)):
        for ignore in (args.cost_of, "") if index % 2 == 0 else ("", args.cost_of):
            shutil.rmtree(root / ".lsp-check-cache", ignore_errors=True)
            (without if ignore else full).append(run(root, args.jobs, env, ignore=ignore)[:2])
    pairs = sorted(cpu / base - 1 for (_, cpu), (_, base) in zip(full, without))
    (wall, cpu), (base_wall, base_cpu) = min(full), min(without)
    print(f"cost of    {args.cost_of}: {wall - base_wall:+.2f} s wall ({(wall / base_wall - 1) * 100:+.1f}%), "
          f"{cpu - base_cpu:+.2f} s CPU ({(cpu / base_cpu - 1) * 100:+.1f}%); lowest of {len(full)} cold runs "
          f"with them and {len(without)} without")
    print(f"           CPU with them against without them within each pair: median {pairs[len(pairs) // 2] * 100:+.1f}%, "
          f"from {pairs[0] * 100:+.1f}% to {pairs[-1] * 100:+.1f}%"
          + ("  (straddles zero: the machine hides the cost)" if pairs[0] < 0 < pairs[-1] else ""))


if __name__ == "__main__":
    raise SystemExit(main())
