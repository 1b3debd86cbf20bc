"""Regenerate the shipped tables from the raw upstream facts.

Usage: python mappings/build [--data DIR] [folder ...]

Each sibling module `<folder>_tables.py`, named after a `mappings/` folder (torch_npu,
mindspore, msprobe, ascend_tools), exposes `build(data_dir: Path, out_dir: Path) -> list[Path]` and
writes that folder's TOML files. (Not `<folder>.py`: a builder named `mindspore` would
shadow the real package it checks the tables against.) The facts default to the vendored copy
in mappings/upstream/ (see upstream.py). Nothing at run time reads them: only the output is shipped.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from upstream import DATA  # noqa: E402  (the build folder is on sys.path from here on)

MAPPINGS = HERE.parent
SOURCES = ("torch_npu", "torch", "mindspore", "msprobe", "platform", "ascend_tools", "schema")


def main() -> int:
    parser = argparse.ArgumentParser(prog="python mappings/build")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("only", nargs="*", choices=[*SOURCES, []], help="folders to rebuild (default: all present)")
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"error: no upstream facts at {args.data} (pass --data)", file=sys.stderr)
        return 2
    for name in args.only or SOURCES:
        if not (HERE / f"{name}_tables.py").exists():
            continue
        module = importlib.import_module(f"{name}_tables")
        for path in module.build(args.data, MAPPINGS / name):
            print(f"wrote {path.relative_to(MAPPINGS.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
