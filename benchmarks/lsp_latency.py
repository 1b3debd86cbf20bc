"""Latency of the language server as a client sees it, over stdio, on a real 2,000-line file.

    python benchmarks/lsp_latency.py [--edits 200] [--documents 100] [--corpus DIR]
    python benchmarks/lsp_latency.py --typing [--statements 4] [--corpus DIR]

Uses the transformers 5.23.0 wheel's sources (downloaded into benchmarks/.bench/ once)
and a minimal JSON-RPC client in this process, and prints:

- the bare import of pygls + lsprotocol (package inits, and the modules a server loads);
- server start → first diagnostics for the file (process spawn to publishDiagnostics);
- edit → diagnostics over single-character edits: pulled (didChange, then
  textDocument/diagnostic) and pushed (didChange of a line break, which moves every
  finding below it, until the publishDiagnostics for that version); the edits are
  spaced like typing, so the debounce (leading edge) does not delay them;
- resident memory of the server with 100 documents open and analysed;
- with --typing: statements (`torch.cuda.synchronize()`, ...) typed letter by letter into
  the middle of the largest function of three long files (Enter, then one keystroke at a
  time, pulling diagnostics after each; most of the intermediate texts are not valid
  Python), then a `)` added and deleted in turn after each, as the typing probe
  (../shared/tools/lsp-typing-probe.py) does: an unmatched closing bracket every other
  keystroke; keystroke → diagnostics.

Budgets (DESIGN.md): p95 ≤ 50 ms; start → first diagnostics ≤ 0.5 s beyond the import.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import keyword
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import cli_corpus
from speed_doc import record

FILES = (
    "transformers/models/whisper/generation_whisper.py",  # 2,091 lines, 7 findings; one class of 1,850 lines
    "transformers/models/blip_2/modeling_blip_2.py",  # 2,040 lines in 25 classes
)
TYPING_FILES = (
    "transformers/models/wav2vec2/modeling_wav2vec2.py",  # 2,027 lines
    "transformers/training_args.py",  # 2,962 lines, one dataclass of 2,500 lines
    "transformers/trainer.py",  # 4,760 lines, one class of 4,300 lines
)
STATEMENTS = ("torch.cuda.synchronize()", 'x = torch.ones(2, device="cuda")', "if torch.cuda.is_available():")
SERVER = [sys.executable, "-m", "ascend_lsp.lsp.server"]
TYPING = 0.1  # seconds between edits: a fast typist (bursts faster than the debounce are coalesced)
BRACKET_KEYS = 8  # after each typed statement: `)` added, deleted, added, ...


def corpus(given: str | None = None) -> Path:
    """The unpacked transformers 5.23.0 sources: `given`, or cli_corpus.py's."""
    return Path(given).resolve() if given else cli_corpus.corpus()


class Client:
    """Just enough JSON-RPC: requests with futures, notifications into a queue, and
    empty answers to the server's own requests."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.ids = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.published: dict[str, dict] = {}  # uri → last publishDiagnostics params
        self.arrivals: dict[tuple[str, int], float] = {}  # (uri, version) → when its diagnostics arrived
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls) -> Client:
        process = await asyncio.create_subprocess_exec(*SERVER, stdin=asyncio.subprocess.PIPE,
                                                       stdout=asyncio.subprocess.PIPE)
        return cls(process)

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: dict) -> None:
        self._send({"method": method, "params": params})

    async def request(self, method: str, params: dict | None = None):
        self.ids += 1
        future = self.pending[self.ids] = asyncio.get_running_loop().create_future()
        self._send({"id": self.ids, "method": method, "params": params})
        return await future

    async def _read(self) -> None:
        stdout = self.process.stdout
        while True:
            header = await stdout.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"Content-Length: (\d+)", header).group(1))
            message = json.loads(await stdout.readexactly(length))
            now = time.perf_counter()
            if "method" not in message:
                self.pending.pop(message["id"]).set_result(message.get("result"))
            elif "id" in message:  # a request from the server
                configuration = message["method"] == "workspace/configuration"
                answer = [None] * len(message["params"]["items"]) if configuration else None
                self._send({"id": message["id"], "result": answer})
            elif message["method"] == "textDocument/publishDiagnostics":
                params = message["params"]
                self.published[params["uri"]] = params
                self.arrivals[(params["uri"], params.get("version"))] = now

    async def initialize(self, root: Path, pull: bool) -> None:
        text_document = {"synchronization": {"dynamicRegistration": False},
                         "publishDiagnostics": {"versionSupport": True}}
        if pull:
            text_document["diagnostic"] = {"dynamicRegistration": False}
        await self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                          "capabilities": {"textDocument": text_document,
                                                           "general": {"positionEncodings": ["utf-16"]}}})
        self.notify("initialized", {})

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                              "text": text}})
        return uri

    def change(self, uri: str, version: int, line: int, col: int, end_col: int, text: str) -> None:
        self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": col},
                                          "end": {"line": line, "character": end_col}}, "text": text}]})

    async def pull(self, uri: str) -> dict:
        return await self.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})

    async def wait_published(self, uri: str, version: int, timeout: float = 10.0) -> float:
        deadline = time.perf_counter() + timeout
        while (uri, version) not in self.arrivals:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no diagnostics for version {version}")
            await asyncio.sleep(0.0005)
        return self.arrivals[(uri, version)]

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024

    async def close(self) -> None:
        await self.request("shutdown")
        self.notify("exit", None)
        await self.process.wait()
        self.reader.cancel()


def import_seconds(statement: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def p95_ms(samples: list[float]) -> float:
    ms = sorted(s * 1000 for s in samples)
    return ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]


def summary(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = p95_ms(samples)
    return f"p50 {statistics.median(ms):6.1f} ms   p95 {p95:6.1f} ms   max {ms[-1]:6.1f} ms   (n={len(ms)})"


async def start_to_first_diagnostics(root: Path, path: Path, text: str) -> float:
    start = time.perf_counter()
    client = await Client.start()
    await client.initialize(root, pull=False)
    uri = client.open(path, text)
    arrived = await client.wait_published(uri, 1, timeout=30)
    await client.close()
    return arrived - start


def identifier_edits(text: str, count: int, seed: int = 7) -> list[tuple[int, int]]:
    """(line, column) ends of identifiers in indented code: where typing one more letter
    keeps the file valid (the common case while editing a function)."""
    spots = [(i, m.end()) for i, line in enumerate(text.splitlines()) if line.startswith("        ")
             and not line.lstrip().startswith(("#", '"', "'"))
             for m in re.finditer(r"\b[a-z_]\w*\b", line)
             if line[:m.start()].count('"') % 2 == 0 and not keyword.iskeyword(m.group())]
    return random.Random(seed).sample(spots, count)


async def pulled_latency(root: Path, path: Path, text: str, edits: int) -> list[float]:
    client = await Client.start()
    await client.initialize(root, pull=True)
    uri = client.open(path, text)
    await client.pull(uri)
    samples, version = [], 1
    for line, col in identifier_edits(text, edits // 2):
        for change in ((col, col, "x"), (col, col + 1, "")):  # type a letter, then take it back
            version += 1
            await asyncio.sleep(TYPING)
            start = time.perf_counter()
            client.change(uri, version, line, *change)
            await client.pull(uri)
            samples.append(time.perf_counter() - start)
    await client.close()
    return samples


async def pushed_latency(root: Path, path: Path, text: str, edits: int) -> list[float]:
    client = await Client.start()
    await client.initialize(root, pull=False)
    uri = client.open(path, text)
    await client.wait_published(uri, 1)
    last_finding = max(d["range"]["start"]["line"] for d in client.published[uri]["diagnostics"])
    lines = random.Random(11).sample([i for i, line in enumerate(text.splitlines()[:last_finding])
                                      if line.startswith("        ")], edits // 2)
    samples, version = [], 1
    for line in lines:
        for change in ((line, 0, 0, "\n"), (line, 0, 0, "")):  # a new line, then join it back
            version += 1
            await asyncio.sleep(TYPING)
            start = time.perf_counter()
            if change[3]:
                client.change(uri, version, *change)
            else:
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                         "contentChanges": [{"range": {
                                                             "start": {"line": line, "character": 0},
                                                             "end": {"line": line + 1, "character": 0}}, "text": ""}]})
            samples.append(await client.wait_published(uri, version) - start)
    await client.close()
    return samples


def typing_spots(text: str, count: int) -> list[tuple[int, str]]:
    """(line, indentation) of statement ends nearest the middle of the largest function,
    where the cursor goes before pressing Enter."""
    tree = ast.parse(text)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    largest = max(functions, key=lambda f: f.end_lineno - f.lineno)
    middle = (largest.lineno + largest.end_lineno) // 2
    lines = re.split(r"\r\n|\r|\n", text)
    ends = sorted({(n.end_lineno - 1, n.col_offset) for n in ast.walk(largest) if isinstance(n, ast.stmt)
                   and n is not largest and not hasattr(n, "body") and n.lineno == n.end_lineno},
                  key=lambda spot: abs(spot[0] - middle))
    return [(line, " " * col) for line, col in ends[:count] if not lines[line].rstrip().endswith("\\")]


async def typing_latency(root: Path, path: Path, text: str, statements: int) -> tuple[list[float], list[float]]:
    """Keystroke → pulled diagnostics while typing statements into the largest function,
    and the server's CPU time for each (what a busy machine's scheduler cannot inflate)."""
    client = await Client.start()
    await client.initialize(root, pull=True)
    uri = client.open(path, text)
    await client.pull(uri)
    lines = re.split(r"\r\n|\r|\n", text)
    samples, cpu_samples, version = [], [], 1
    for n, (line, indent) in enumerate(typing_spots(text, statements)):
        statement, col = STATEMENTS[n % len(STATEMENTS)], len(lines[line])
        end = len(indent) + len(statement)
        keys = [(line, col, col, "\n" + indent)] + [(line + 1, len(indent) + k, len(indent) + k, ch)
                                                    for k, ch in enumerate(statement)]
        keys += [(line + 1, end, end, ")") if k % 2 == 0 else (line + 1, end, end + 1, "") for k in range(BRACKET_KEYS)]
        for at_line, at_col, end_col, key in keys:
            version += 1
            await asyncio.sleep(TYPING)
            start, cpu = time.perf_counter(), client.cpu_seconds()
            client.change(uri, version, at_line, at_col, end_col, key)
            await client.pull(uri)
            samples.append(time.perf_counter() - start)
            cpu_samples.append(client.cpu_seconds() - cpu)
        version += 1  # take the typed line back out, as an undo would
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
            {"range": {"start": {"line": line, "character": col},
                       "end": {"line": line + 1, "character": len(indent) + len(statement)}}, "text": ""}]})
        await client.pull(uri)
    await client.close()
    return samples, cpu_samples


async def memory_with_documents(root: Path, count: int) -> tuple[float, float, int]:
    files = sorted(root.glob("transformers/models/*/modeling_*.py"))[:count]
    client = await Client.start()
    await client.initialize(root, pull=True)
    uri = client.open(files[0], files[0].read_text(encoding="utf-8"))
    await client.pull(uri)
    one = client.rss_mib()
    lines = 0
    for path in files[1:]:
        text = path.read_text(encoding="utf-8")
        lines += text.count("\n")
        await client.pull(client.open(path, text))
    many = client.rss_mib()
    await client.close()
    return one, many, lines


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--file", action="append", help="a file of the corpus (default: two 2,000-line files)")
    parser.add_argument("--corpus", help="unpacked transformers 5.23.0 sources (default: fetch the wheel once)")
    parser.add_argument("--typing", action="store_true", help="only the typed statements, on three long files")
    parser.add_argument("--statements", type=int, default=4, help="statements typed per file (with --typing)")
    args = parser.parse_args()
    root = corpus(args.corpus)
    if args.typing:
        typed = []
        for name in args.file or TYPING_FILES:
            text = (root / name).read_text(encoding="utf-8")
            samples, cpu = await typing_latency(root, root / name, text, args.statements)
            print(f"{name} ({text.count(chr(10)):,} lines)\n  keystroke -> diagnostics, pulled   {summary(samples)}"
                  f"\n  server CPU per keystroke, mean     {sum(cpu) / len(cpu) * 1000:6.1f} ms"
                  "   (clock ticks of 10 ms: too coarse for percentiles)")
            typed.append(f"{Path(name).name} {p95_ms(samples):.0f} ms")
        if not args.file:
            record("typing", ", ".join(typed))
        return 0
    print(f"python {sys.version.split()[0]}; {os.cpu_count()} cores")
    bare = import_seconds("import pygls, lsprotocol")
    loaded = import_seconds("import pygls.lsp.server, lsprotocol.types")
    print(f"import pygls, lsprotocol (package inits)      {bare * 1000:7.0f} ms")
    print(f"import pygls.lsp.server, lsprotocol.types     {loaded * 1000:7.0f} ms")
    edits, starts = [], []
    for name in args.file or FILES:
        path = root / name
        text = path.read_text(encoding="utf-8")
        print(f"\n{name} ({text.count(chr(10)):,} lines)")
        first = statistics.median([await start_to_first_diagnostics(root, path, text) for _ in range(3)])
        print(f"  server start -> first diagnostics  {first * 1000:7.0f} ms"
              f"   ({(first - loaded) * 1000:+.0f} ms beyond the pygls + lsprotocol import; budget +500 ms)")
        pulled, pushed = (await pulled_latency(root, path, text, args.edits),
                          await pushed_latency(root, path, text, args.edits))
        print(f"  edit -> diagnostics, pulled   {summary(pulled)}")
        print(f"  edit -> diagnostics, pushed   {summary(pushed)}")
        short = path.parent.name
        edits.append(f"{short} {p95_ms(pulled):.0f} / {p95_ms(pushed):.0f} ms")
        starts.append(f"{short} {first - loaded:.2f} s")
    record("edit", ", ".join(edits))
    record("start", ", ".join(starts))
    one, many, lines = await memory_with_documents(root, args.documents)
    print(f"\nRSS: {one:.0f} MiB with 1 document, {many:.0f} MiB with {args.documents} documents "
          f"({lines:,} lines) open and analysed")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
