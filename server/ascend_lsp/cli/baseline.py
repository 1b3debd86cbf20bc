"""Baselines: accept the findings a codebase has today so CI fails only on new ones.

The file is JSON (sorted, one entry per line, so reviews and merges read well):

    {
      "lsp-check-baseline": 1,
      "findings": [
        {"file": "src/train.py", "code": "NPU102", "source": "x = batch.cuda()", "count": 2},
        ...
      ]
    }

An entry is keyed on the file (POSIX path relative to the baseline file's folder), the
rule code and the text of the line the finding starts on with its whitespace normalised,
never on a line number: inserting or moving lines elsewhere leaves it matching. `count` is
how many identical keys the file had; a finding is accepted when its occurrence index
among identical keys (in line order) is below the count, so a third copy of a line that
had two is new. Rewriting the baseline drops what was fixed; files that the rewriting run
did not check keep their entries while they exist.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..safe_write import WriteRefused, write_file
from ..sources import SourceError, read_regular
from .check import FileResult, Record

FORMAT = 1
Key = tuple[str, str, str]  # (file, code, normalised source line)


class BaselineError(Exception):
    pass


def collapse_spaces(line: str) -> str:
    return " ".join(line.split())


def file_key(path: str, folder: Path) -> str:
    return Path(os.path.relpath(os.path.abspath(path), folder)).as_posix()


def keyed(result: FileResult, folder: Path) -> Iterator[tuple[Key, int, Record]]:
    """(key, occurrence index among identical keys, record) in line order."""
    name = file_key(result.path, folder)
    seen: Counter = Counter()
    for record in sorted(result.records, key=lambda r: (r.line, r.col, r.code)):
        key = (name, record.code, collapse_spaces(record.source_line))
        yield key, seen[key], record
        seen[key] += 1


@dataclass
class Baseline:
    folder: Path  # paths in the file are relative to it
    counts: Counter  # Key → count

    @classmethod
    def load(cls, path: Path) -> "Baseline":
        try:
            data = json.loads(read_regular(str(path))[0].decode("utf-8"))
            if data.get("lsp-check-baseline") != FORMAT:
                raise BaselineError(f"{path}: not an lsp-check baseline (format {FORMAT})")
            counts = Counter({(e["file"], e["code"], e["source"]): int(e["count"]) for e in data["findings"]})
        except SourceError as exc:
            raise BaselineError(f"{path}: cannot read the baseline: {str(exc).removeprefix('cannot read: ')}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BaselineError(f"{path}: not a valid baseline file: {exc}") from None
        return cls(path.resolve().parent, counts)

    def filter(self, results: list[FileResult]) -> tuple[int, int]:
        """Drop the accepted findings from `results` in place. Returns (findings
        accepted, baseline entries that matched nothing any more: fixed or removed)."""
        accepted = 0
        used: Counter = Counter()
        for result in results:
            kept = []
            for key, index, record in keyed(result, self.folder):
                if index < self.counts[key]:
                    accepted += 1
                    used[key] += 1
                else:
                    kept.append(record)
            result.records = sorted(kept, key=lambda r: (r.line, r.col, r.code))
        checked = {file_key(r.path, self.folder) for r in results if not r.error}
        stale = sum(count - used[key] for key, count in self.counts.items() if key[0] in checked)
        return accepted, stale


def write_baseline(path: Path, results: list[FileResult]) -> int:
    """Write the baseline for `results` (merged with the entries of files this run did
    not check and that still exist); returns the number of findings in it."""
    folder = path.resolve().parent
    counts: Counter = Counter()
    if path.exists():
        checked = {file_key(r.path, folder) for r in results if not r.error}
        for key, count in Baseline.load(path).counts.items():
            if key[0] not in checked and (folder / key[0]).exists():
                counts[key] = count
    for result in results:
        for key, _index, _record in keyed(result, folder):
            counts[key] += 1
    entries = [json.dumps({"file": f, "code": c, "source": s, "count": n}, ensure_ascii=False)
               for (f, c, s), n in sorted(counts.items())]
    body = ",\n    ".join(entries)
    text = f'{{\n  "lsp-check-baseline": {FORMAT},\n  "findings": [\n    {body}\n  ]\n}}\n' if entries else \
        f'{{\n  "lsp-check-baseline": {FORMAT},\n  "findings": []\n}}\n'
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(str(path), text.encode("utf-8"))
    except (OSError, WriteRefused) as exc:
        raise BaselineError(f"cannot write_baseline the baseline {path}: {getattr(exc, 'strerror', None) or exc}") from None
    return sum(counts.values())
