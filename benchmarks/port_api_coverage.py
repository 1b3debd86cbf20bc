"""How much of the torch API that real model code calls the port's API table covers.

    python benchmarks/port_api_coverage.py [--ranked OUT.tsv] [--top N]

Counts the torch API calls in the model files of two wheels, transformers 5.23.0
(`models/**/modeling_*.py`, benchmarks/.bench, as cli_corpus.py fetches it) and diffusers
0.42.1 (`models/**.py`, downloaded with pip into benchmarks/.bench on first use), and prints
the table's size (rows, torch APIs, proven ones) and the share of the counted calls whose
API the table proves, alone and with the hand-written specs (port/specs.py, run by
tests/port/test_emitted.py). --ranked writes every counted API with its count.

What is counted: a call whose callee resolves through the file's imports to a `torch.` name
(`torch.cat`, `F.softmax` after `import torch.nn.functional as F`, `nn.Linear`, `LayerNorm`
after `from torch.nn import LayerNorm`), and a method call `.x(...)` on a value that is not a
module the file imported, not `self`/`super()` and not a literal, where `x` is a method of
torch.Tensor and of no built-in type (str, bytes, list, tuple, dict, set, int, float): a
`.split(` or `.count(` may be a string's or a list's, so those names are left out of the
count (and listed with --ranked as ambiguous). Those are counted as `torch.Tensor.x`.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
BENCH = HERE / ".bench"
TRANSFORMERS = BENCH / "transformers-5.23.0-py3-none-any.whl"
DIFFUSERS = BENCH / "diffusers-0.42.1-py3-none-any.whl"
sys.path[:0] = [str(REPO / "server")]

from ascend_lsp.knowledge.port_api import BUILTIN_METHODS, load_port_api  # noqa: E402

TENSOR_METHODS_SOURCE = "torch.Tensor's attributes, read from the installed torch"
MODEL_FILES = {TRANSFORMERS: re.compile(r"^transformers/models/.+/modeling_[^/]+\.py$"),
               DIFFUSERS: re.compile(r"^diffusers/models/.+\.py$")}


def wheels() -> list[Path]:
    if not TRANSFORMERS.is_file():
        raise SystemExit(f"no {TRANSFORMERS.name} in {BENCH}: run benchmarks/cli_corpus.py once")
    if not DIFFUSERS.is_file():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--dest", str(BENCH),
                        "diffusers==0.42.1"], check=True)
    return [TRANSFORMERS, DIFFUSERS]


def tensor_method_names() -> tuple[set[str], set[str]]:
    """The method names counted as tensor methods, and the ambiguous ones left out."""
    import torch

    names = {n for n in dir(torch.Tensor) if not n.startswith("_") and callable(getattr(torch.Tensor, n, None))}
    return names - BUILTIN_METHODS, names & BUILTIN_METHODS


class _Calls(ast.NodeVisitor):
    def __init__(self, methods: set[str], ambiguous: set[str]) -> None:
        self.methods, self.ambiguous = methods, ambiguous
        self.aliases: dict[str, str] = {}  # local name → the module or object it names
        self.counts: Counter[str] = Counter()
        self.left_out: Counter[str] = Counter()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                self.aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            for alias in node.names:
                self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def qualname(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            head = self.qualname(node.value)
            return f"{head}.{node.attr}" if head else None
        return None

    def visit_Call(self, node: ast.Call) -> None:
        name = self.qualname(node.func)
        if name is not None:
            if name.split(".")[0] == "torch":
                self.counts[name] += 1
        elif isinstance(node.func, ast.Attribute) and _may_be_tensor(node.func.value):
            method = node.func.attr
            if method in self.methods:
                self.counts[f"torch.Tensor.{method}"] += 1
            elif method in self.ambiguous:
                self.left_out[f"torch.Tensor.{method}"] += 1
        self.generic_visit(node)


def _may_be_tensor(receiver: ast.expr) -> bool:
    if isinstance(receiver, ast.Name):
        return receiver.id != "self"
    if isinstance(receiver, ast.Call):
        return not (isinstance(receiver.func, ast.Name) and receiver.func.id == "super")
    return not isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set,
                                     ast.ListComp, ast.DictComp, ast.SetComp))


def count_calls() -> tuple[Counter[str], Counter[str], int]:
    """Calls per torch API over the model files, the ambiguous method calls left out, and the
    number of files read."""
    methods, ambiguous = tensor_method_names()
    counts: Counter[str] = Counter()
    left_out: Counter[str] = Counter()
    files = 0
    for wheel in wheels():
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if not MODEL_FILES[wheel].match(name):
                    continue
                try:
                    tree = ast.parse(archive.read(name))
                except SyntaxError:
                    continue
                visitor = _Calls(methods, ambiguous)
                visitor.visit(tree)
                counts.update(visitor.counts)
                left_out.update(visitor.left_out)
                files += 1
    return counts, left_out, files


def main() -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/port_api_coverage.py")
    parser.add_argument("--ranked", type=Path, help="write every counted API with its count (TSV)")
    parser.add_argument("--top", type=int, default=0, help="print the N most called APIs")
    args = parser.parse_args()
    counts, left_out, files = count_calls()
    total = sum(counts.values())
    ranked = counts.most_common()
    if args.ranked:  # before the table is read: the table's builder reads this list
        lines = ["rank\tcalls\tapi", *(f"{i}\t{n}\t{api}" for i, (api, n) in enumerate(ranked, 1)),
                 *(f"-\t{n}\t{api}" for api, n in left_out.most_common())]  # ambiguous: not counted
        args.ranked.write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = load_port_api()
    from ascend_lsp.port.specs import BY_TORCH, LAYER_CLASSES

    proven = table.proven_apis()
    specs = set(BY_TORCH) | set(LAYER_CLASSES)
    in_table = sum(n for api, n in counts.items() if api in proven)
    with_specs = sum(n for api, n in counts.items() if api in proven or api in specs)
    print(f"model files: {files}; torch API calls: {total} of {len(counts)} APIs "
          f"({sum(left_out.values())} ambiguous method calls not counted)")
    print(f"table: {len(table.rows)} rows, {len(table.apis())} torch APIs, {len(proven)} proven "
          f"({len(proven & specs)} of them converted first by the hand-written specs, which their tests then run)")
    print(f"calls covered by proven table rows: {in_table} ({100 * in_table / total:.1f} %)")
    print(f"calls covered by proven table rows or the hand-written specs: {with_specs} "
          f"({100 * with_specs / total:.1f} %)")
    for api, n in ranked[:args.top]:
        print(f"{n:7d}  {api}  {'proven' if api in proven else 'spec' if api in specs else '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
