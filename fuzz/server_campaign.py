"""A fuzz campaign against the language server: real corpus files opened in a real server
process over stdio, random edits (line breaks of every kind, form feeds, U+2028, emoji,
Chinese, broken syntax, pasted lines) and random requests (pull diagnostics, hover, code
actions, completion, and requests with invalid params). Each pull is compared with a
full check of the same text by the engine.

    python fuzz/server_campaign.py [--files 12] [--edits 3000] [--minutes 12] [--seed 1]
                                   [--corpus DIR]

Counts crashes (the server process died), unanswered requests (no answer within
--timeout), hangs (an answer slower than --slow), drift (a pull that differs from the
full check) and wrong answers to invalid params; exits 1 if any is non-zero.
The corpus is the transformers 5.23.0 sources (fetched once, as benchmarks/ do)."""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ascend_lsp.analysis import analyze  # noqa: E402
from ascend_lsp.engine.config import Settings  # noqa: E402
from ascend_lsp.engine.text import SourceText, utf16_col  # noqa: E402
from ascend_lsp.lsp.positions import Lines  # noqa: E402
from fuzz.lsp_stdio import LspProcess, ServerGone  # noqa: E402

PIECES = ["\r", "\n", "\r\n", "\x0c", "\x0c\n", "\u2028", "\x85", "\x0b", "🚀", "注释", " ", "    ", "x", "(", ")",
          "[", ":", "\"\"\"", "'", "#", ",", ".", "torch.cuda.synchronize()", ".cuda()", "device=\"cuda\"",
          "def f(self", "class C:", "import os", "from torch import cuda", "if x:", "return ", "\\",
          "\n    y = torch.cuda.current_device()\n", "\n        pass\n", "\ndef g():\n    torch.cuda.synchronize()\n",
          "# noqa: NPU103", "\t", "\x00"]
INVALID = [
    ("textDocument/hover", lambda uri: {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}}),
    ("textDocument/hover", lambda uri: {"textDocument": {"uri": uri}}),
    ("textDocument/completion", lambda uri: {"position": {"line": 0, "character": 0}}),
    ("textDocument/codeAction", lambda uri: {"textDocument": {"uri": uri}, "range": {
        "start": {"line": 0, "character": -3}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}),
    ("textDocument/diagnostic", lambda uri: None),
    ("textDocument/diagnostic", lambda uri: [uri]),
]


def corpus(given: str | None) -> Path:
    if given:
        return Path(given)
    spec = importlib.util.spec_from_file_location("lsp_latency", HERE.parent / "benchmarks" / "lsp_latency.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.corpus()


def position(text: str, offset: int) -> tuple[int, dict]:
    if 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n":
        offset -= 1  # no position names the middle of a \r\n
    source = SourceText(text)
    line, col = source.position(offset)
    return offset, {"line": line, "character": utf16_col(source.line(line), col)}


def expected(text: str) -> list[tuple]:
    source = SourceText(text)
    lines = Lines([source.line(i) for i in range(len(source.lines))], "utf-16")
    out = []
    for finding in analyze(text, Settings()).findings:
        rng = lines.range(finding.range)
        out.append((finding.code, rng.start.line, rng.start.character, rng.end.line, rng.end.character))
    return sorted(out)


def received(items: list[dict]) -> list[tuple]:
    return sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"],
                   d["range"]["end"]["line"], d["range"]["end"]["character"]) for d in items)


def random_edit(rng: random.Random, text: str, donor: str) -> tuple[int, int, str]:
    start = rng.randrange(len(text) + 1)
    kind = rng.random()
    if kind < 0.55:  # typing
        return start, start, rng.choice(PIECES)
    if kind < 0.8:  # deleting
        return start, min(len(text), start + rng.choice((1, 1, 2, 5, 20, 200))), ""
    if kind < 0.95:  # pasting lines from another file
        lines = donor.splitlines(keepends=True)
        first = rng.randrange(max(len(lines), 1))
        return start, start, "".join(lines[first:first + rng.randrange(1, 30)])
    return start, min(len(text), start + rng.randrange(50)), "".join(rng.choices(PIECES, k=rng.randrange(1, 6)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--edits", type=int, default=3000)
    parser.add_argument("--minutes", type=float, default=12)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", help="unpacked transformers 5.23.0 sources (default: fetch the wheel once)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds before a request counts as unanswered")
    parser.add_argument("--slow", type=float, default=10, help="seconds after which an answer counts as a hang")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    files = sorted(p for p in corpus(args.corpus).rglob("*.py") if 2_000 < p.stat().st_size < 120_000)
    chosen = rng.sample(files, args.files)
    deadline = time.monotonic() + args.minutes * 60
    counts: Counter = Counter()
    drift_examples: list[str] = []
    per_file = max(1, args.edits // args.files)
    with tempfile.TemporaryDirectory() as root:
        server = LspProcess(root)
        server.initialize(Path(root).as_uri())
        for n, path in enumerate(chosen):
            if time.monotonic() > deadline:
                break
            text = path.read_text(encoding="utf-8")
            donor = rng.choice(files).read_text(encoding="utf-8")
            uri = (Path(root) / f"f{n}_{path.name}").as_uri()
            server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                                    "version": 1, "text": text}})
            counts["inputs"] += 1
            version = 1
            for _ in range(per_file):
                if time.monotonic() > deadline:
                    break
                changes = []
                for _ in range(rng.choice((1, 1, 1, 2, 3))):
                    start, end, new = random_edit(rng, text, donor)
                    start, start_pos = position(text, start)
                    end, end_pos = position(text, max(start, end))
                    changes.append({"range": {"start": start_pos, "end": end_pos}, "text": new})
                    text = text[:start] + new + text[end:]
                version += 1
                counts["edits"] += len(changes)
                try:
                    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                             "contentChanges": changes})
                    request(server, rng, uri, text, counts, drift_examples, args)
                except ServerGone:
                    counts["crashes"] += 1
                    print("the server died:", b"".join(server.stderr)[-2000:].decode(errors="replace"))
                    return report(counts, drift_examples)
            server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        if server.close() not in (0,):
            counts["unclean exits"] += 1
    return report(counts, drift_examples)


def request(server: LspProcess, rng: random.Random, uri: str, text: str, counts: Counter, drift: list[str],
            args: argparse.Namespace) -> None:
    """One random request after an edit; a pull compared with a full check."""
    kind = rng.random()
    source = SourceText(text)
    line = rng.randrange(len(source.lines))
    where = {"line": line, "character": rng.randrange(len(source.line(line)) + 2)}
    doc = {"textDocument": {"uri": uri}}
    if kind < 0.45:
        method, params = "textDocument/diagnostic", doc
    elif kind < 0.6:
        method, params = "textDocument/hover", {**doc, "position": where}
    elif kind < 0.75:
        method, params = "textDocument/completion", {**doc, "position": where}
    elif kind < 0.9:
        method, params = "textDocument/codeAction", {**doc, "range": {"start": where, "end": where},
                                                     "context": {"diagnostics": []}}
    else:
        method, make = rng.choice(INVALID)
        params = make(uri)
    start = time.monotonic()
    try:
        response = server.request(method, params, timeout=args.timeout)
    except TimeoutError:
        counts["unanswered"] += 1
        return
    elapsed = time.monotonic() - start
    counts["requests"] += 1
    counts[f"requests {method}"] += 1
    if elapsed > args.slow:
        counts["hangs"] += 1
    if kind >= 0.9:
        if response.get("error", {}).get("code") != -32602:
            counts["invalid params not answered as InvalidParams"] += 1
        return
    if "error" in response:
        counts["error answers"] += 1
        return
    if method == "textDocument/diagnostic":
        counts["pulls compared"] += 1
        got, want = received(response["result"]["items"]), expected(text)
        if got != want:
            counts["drift"] += 1
            if len(drift) < 5:
                drift.append(f"{uri}: server {sorted(set(got) - set(want))[:3]}, full check "
                             f"{sorted(set(want) - set(got))[:3]}")


def report(counts: Counter, drift: list[str]) -> int:
    for key in ("inputs", "edits", "requests", "pulls compared", "crashes", "unanswered", "hangs", "drift",
                "error answers", "invalid params not answered as InvalidParams", "unclean exits"):
        print(f"{key:45} {counts.get(key, 0):8,}")
    for key in sorted(k for k in counts if k.startswith("requests ")):
        print(f"  {key:43} {counts[key]:8,}")
    for example in drift:
        print("drift in:", example)
    bad = ("crashes", "unanswered", "hangs", "drift", "error answers", "invalid params not answered as InvalidParams",
           "unclean exits")
    return 1 if any(counts.get(k) for k in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
