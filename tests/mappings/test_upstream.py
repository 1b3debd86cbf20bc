"""mappings/upstream/, the vendored upstream facts: every table rebuilds from it, every file
in it has its provenance written down, and it is in step with ../shared/data when that is here."""

from __future__ import annotations

import filecmp
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "mappings" / "build"
sys.path.insert(0, str(BUILD))
import upstream  # noqa: E402  (mappings/build/upstream.py: the builders' one data root)


def vendored_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_builders_read_the_vendored_copy() -> None:
    assert upstream.DATA == ROOT / "mappings" / "upstream"
    assert (upstream.DATA / "README.md").is_file()


def test_every_vendored_file_has_its_provenance() -> None:
    provenance = (upstream.DATA / "PROVENANCE.md").read_text(encoding="utf-8")
    undocumented = sorted(name for name in vendored_files(upstream.DATA) - upstream.OWN_FILES - {"README.md"}
                          if f"{name.rpartition('/')[2]}`" not in provenance)
    assert not undocumented, f"add these to mappings/upstream/PROVENANCE.md: {undocumented}"


@pytest.mark.skipif(not upstream.SHARED.is_dir(),
                    reason=f"no shared fact folder at {upstream.SHARED} to compare the vendored copy with")
def test_vendored_copy_is_in_step_with_shared_data() -> None:
    shared = vendored_files(upstream.SHARED)
    vendored = vendored_files(upstream.DATA) - upstream.OWN_FILES
    missing, removed = sorted(shared - vendored), sorted(vendored - shared)
    changed = sorted(n for n in shared & vendored
                     if not filecmp.cmp(upstream.SHARED / n, upstream.DATA / n, shallow=False))
    assert not (missing or removed or changed), (
        f"mappings/upstream/ is out of step with {upstream.SHARED}: new {missing}, removed {removed}, "
        f"changed {changed}; run `make upstream`, then `make mappings`"
    )


@pytest.mark.parametrize("folder", ["torch_npu", "torch", "mindspore", "msprobe", "platform", "ascend_tools", "schema"])
def test_tables_rebuild_identically_from_the_vendored_copy(folder: str, tmp_path: Path) -> None:
    # torch_npu and mindspore tables record what the installed torch / MindSpore say (the test extras)
    module = importlib.import_module(f"{folder}_tables")
    written = module.build(upstream.DATA, tmp_path)
    assert written
    stale = [p.name for p in written
             if p.read_bytes() != (ROOT / "mappings" / folder / p.name).read_bytes()]
    assert not stale, f"out of date, re-run `make mappings`: {stale}"
