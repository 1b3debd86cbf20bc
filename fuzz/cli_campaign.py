"""A robustness campaign against `lsp-check`: mutate files of a real corpus and check what
the checker does with them.

    python fuzz/cli_campaign.py /work/corpora/transformers-5.23.0 --count 2000 --minutes 12

Each mutant is a corpus file with one to three mutations (byte flips, line breaks swapped
to `\\r`, `\\r\\n` or a form feed, deleted or duplicated lines, NUL bytes, a huge line,
broken syntax). Mutants are checked in batches (one `lsp-check` process per batch and per
mode, so the start-up cost is paid once), and every batch is checked for:

- crashes: a traceback or "internal error" on stderr, an exit code outside {0, 1, 2}, or
  exit 2 without an `error:` line saying why;
- hangs: a batch that outlives `--timeout` (then each of its files is run alone to name it);
- drift: the findings of a mutant whose line breaks are normalised to `\\n` differ from the
  mutant's own (the breaks map one to one, so every position must be the same);
- fixes: `--fix` must leave every file that compiled still compiling, and a second `--fix`
  must change nothing; `--fix --unsafe-fixes` must not crash either.

Failing inputs are copied to `--keep` with a note; the figures are printed as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

LSP_CHECK = [sys.executable, "-m", "ascend_lsp.cli.main"]
MAX_INPUT = 150_000  # bytes: larger corpus files are skipped (a huge line is one of the mutations)
SYNTAX_BREAKERS = (b"(", b")", b"def ", b":", b"[", b'"""', b"\\", b"lambda", b"if", b" = =", b"\t")


# --- mutations -------------------------------------------------------------------------------
def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def flip_byte(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return b"\xff"
    at = rng.randrange(len(data))
    return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]


def swap_breaks(data: bytes, rng: random.Random) -> bytes:
    """Some or all `\\n` become `\\r`, `\\r\\n` or gain a form feed (Emacs page breaks)."""
    new = rng.choice([b"\r", b"\r\n", b"\x0c\n", b"\n\x0c"])
    if rng.random() < 0.5:
        return data.replace(b"\n", new)
    lines = _lines(data)
    for index in rng.sample(range(len(lines)), k=max(1, len(lines) // 10)):
        if lines[index].endswith(b"\n") and not lines[index].endswith(b"\r\n"):
            lines[index] = lines[index][:-1] + new
    return b"".join(lines)


def delete_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def duplicate_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    at = rng.randrange(len(lines))
    lines.insert(at, lines[at])
    return b"".join(lines)


def insert_nul(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + b"\0" + data[at:]


def huge_line(data: bytes, rng: random.Random) -> bytes:
    """A very long line with many findings on it, or a long literal."""
    body = rng.choice([
        b"x = [" + b", ".join([b'torch.ones(1).cuda()', b'"cuda:0"', b"torch.cuda.synchronize()"] * 3000) + b"]\n",
        b's = "' + b"a" * 2_000_000 + b'"\n',
    ])
    lines = _lines(data)
    lines.insert(rng.randrange(len(lines) + 1), body)
    return b"".join(lines)


def break_syntax(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(SYNTAX_BREAKERS) + data[at:]


MUTATIONS = {f.__name__: f for f in (flip_byte, swap_breaks, delete_line, duplicate_line, insert_nul, huge_line,
                                     break_syntax)}
WEIGHTS = {"flip_byte": 3, "swap_breaks": 4, "delete_line": 3, "duplicate_line": 2, "insert_nul": 1, "huge_line": 1,
           "break_syntax": 4}


def mutate(data: bytes, rng: random.Random) -> tuple[bytes, list[str]]:
    kinds = rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()), k=rng.choice([1, 1, 2, 3]))
    for kind in kinds:
        data = MUTATIONS[kind](data, rng)
    return data, kinds


def normalise_breaks(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


# --- running ---------------------------------------------------------------------------------
def run(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess | None:
    """lsp-check with `args` in `cwd`; None when it outlives `timeout` (its group is killed)."""
    try:
        return subprocess.run([*LSP_CHECK, *args, "--no-cache", "-q", "-j", "1"], cwd=cwd, capture_output=True,
                              timeout=timeout, start_new_session=True, env={**os.environ, "NO_COLOR": "1"})
    except subprocess.TimeoutExpired:
        return None


def crashed(done: subprocess.CompletedProcess) -> str:
    """Why this exit is a crash, or ""."""
    err = done.stderr.decode("utf-8", "replace")
    if "Traceback" in err or "internal error" in err:
        return "traceback: " + err[-2000:]
    if done.returncode not in (0, 1, 2):
        return f"exit {done.returncode}: {err[-2000:]}"
    if done.returncode == 2 and "error: " not in err:
        return "exit 2 without a reason: " + err[-2000:]
    return ""


def findings(done: subprocess.CompletedProcess) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for item in json.loads(done.stdout or b"[]"):
        where = (item["location"]["row"], item["location"]["column"], item["end_location"]["row"],
                 item["end_location"]["column"])
        out.setdefault(Path(item["filename"]).name, []).append((item["code"], *where))
    return {name: sorted(items) for name, items in out.items()}


def compiles(data: bytes) -> bool:
    try:
        compile(data, "<mutant>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError, MemoryError, RecursionError):
        return False
    return True


class Campaign:
    def __init__(self, keep: Path, timeout: float) -> None:
        self.keep = keep
        self.timeout = timeout
        self.figures: Counter = Counter()
        self.failures: list[dict] = []

    def fail(self, kind: str, name: str, data: bytes, note: str, kinds: list[str]) -> None:
        self.figures[kind] += 1
        self.keep.mkdir(parents=True, exist_ok=True)
        stem = f"{kind}-{len(self.failures)}"
        (self.keep / f"{stem}.py").write_bytes(data)
        self.failures.append({"kind": kind, "file": f"{stem}.py", "mutations": kinds, "note": note[:2000],
                              "origin": name})

    def batch(self, mutants: dict[str, tuple[bytes, list[str], str]]) -> None:
        """Check one batch of mutants: name → (bytes, mutations, corpus file)."""
        with tempfile.TemporaryDirectory(prefix="cli-campaign-") as tmp:
            root = Path(tmp)
            for mode in ("check", "normalised", "fix", "unsafe"):
                (root / mode).mkdir()
                for name, (data, _, _) in mutants.items():
                    (root / mode / name).write_bytes(normalise_breaks(data) if mode == "normalised" else data)
            results = {}
            for mode, args in (("check", ["--output-format", "json"]), ("normalised", ["--output-format", "json"]),
                               ("fix", ["--fix"]), ("unsafe", ["--fix", "--unsafe-fixes"])):
                self.figures["runs"] += 1
                done = run([".", *args], root / mode, self.timeout * max(1, len(mutants) // 10))
                if done is None:
                    self.alone(mutants, mode, args, lambda done: "hangs" if done is None else "")
                    return
                why = crashed(done)
                if why:
                    if not self.alone(mutants, mode, args, lambda done: "crashes" if done and crashed(done) else ""):
                        self.figures["crashes (batch only)"] += 1
                        self.failures.append({"kind": "crashes (batch only)", "note": why[:2000], "args": args})
                    return
                results[mode] = done
            self.compare(mutants, findings(results["check"]), findings(results["normalised"]))
            self.check_fixes(mutants, root / "fix")

    def compare(self, mutants, mine: dict, normalised: dict) -> None:
        for name, (data, kinds, origin) in mutants.items():
            if b"\r" not in data:
                continue
            self.figures["drift checks"] += 1
            if mine.get(name, []) != normalised.get(name, []):
                diff = sorted(set(mine.get(name, [])) ^ set(normalised.get(name, [])))
                # Told apart: a rule's finding moved, or only where a syntax error is reported.
                kind = "drift" if any(code != "E999" for code, *_ in diff) else "drift (E999 only)"
                self.fail(kind, origin, data, f"findings differ once line breaks are \\n: {diff[:10]}", kinds)

    def check_fixes(self, mutants, folder: Path) -> None:
        before = {name: (folder / name).read_bytes() for name in mutants}
        self.figures["runs"] += 1
        again = run([".", "--fix"], folder, self.timeout * max(1, len(mutants) // 10))
        if again is None or crashed(again):
            self.alone(mutants, "fix", ["--fix"], lambda done: "hangs" if done is None else "crashes" if crashed(
                done) else "")
        for name, (data, kinds, origin) in mutants.items():
            fixed = before[name]
            if fixed != data:
                self.figures["files fixed"] += 1
            if compiles(data):
                self.figures["compiling mutants"] += 1
                if not compiles(fixed):
                    self.fail("fix broke compilation", origin, data, "compiles before --fix, not after", kinds)
            if again is not None and not crashed(again) and (folder / name).read_bytes() != fixed:
                self.fail("fix not idempotent", origin, data, "a second --fix changed the file again", kinds)

    def alone(self, mutants, mode: str, args: list[str], verdict) -> bool:
        """Run each mutant of a failed batch alone; record the ones that fail. Any found?"""
        found = False
        for name, (data, kinds, origin) in mutants.items():
            with tempfile.TemporaryDirectory(prefix="cli-campaign-") as tmp:
                path = Path(tmp) / name
                path.write_bytes(normalise_breaks(data) if mode == "normalised" else data)
                done = run([name, *args], Path(tmp), self.timeout)
                kind = verdict(done)
                if kind:
                    found = True
                    note = "timeout" if done is None else crashed(done)
                    self.fail(kind, origin, data, f"{mode} {args}: {note}", kinds)
        return found


def corpus_files(roots: list[Path]) -> list[Path]:
    files = []
    for root in roots:
        for path in root.rglob("*.py"):
            try:
                if path.is_file() and not path.is_symlink() and 0 < path.stat().st_size <= MAX_INPUT:
                    files.append(path)
            except OSError:
                continue
    return sorted(files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="+", type=Path, help="folders of real Python code")
    parser.add_argument("--count", type=int, default=1000, help="mutants to check (default 1000)")
    parser.add_argument("--minutes", type=float, default=10, help="stop after this long (default 10)")
    parser.add_argument("--batch", type=int, default=40, help="mutants per lsp-check run (default 40)")
    parser.add_argument("--timeout", type=float, default=20, help="seconds per mutant before it is a hang")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=Path("fuzz-failures"), help="where failing inputs go")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    files = corpus_files(args.corpus)
    if not files:
        parser.error("no Python files in the corpus")
    campaign = Campaign(args.keep, args.timeout)
    deadline = time.monotonic() + args.minutes * 60
    started, made, lines = time.monotonic(), 0, 0
    kinds: Counter = Counter()
    while made < args.count and time.monotonic() < deadline:
        mutants = {}
        for _ in range(min(args.batch, args.count - made)):
            origin = rng.choice(files)
            data, applied = mutate(origin.read_bytes(), rng)
            kinds.update(applied)
            lines += data.count(b"\n") + data.count(b"\r")
            mutants[f"m{made:06d}.py"] = (data, applied, str(origin))
            made += 1
        campaign.batch(mutants)
        figures = {"inputs": made, "corpus files": len(files), "lines (about)": lines, "mutations": dict(kinds),
                   "seconds": round(time.monotonic() - started), **campaign.figures}
        for kind in ("crashes", "hangs", "drift", "fix broke compilation", "fix not idempotent"):
            figures.setdefault(kind, 0)
        print(f"{made} mutants, {figures['seconds']} s, {len(campaign.failures)} failures", file=sys.stderr,
              flush=True)
    print(json.dumps({"figures": figures, "failures": campaign.failures}, indent=2))
    return 1 if campaign.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
