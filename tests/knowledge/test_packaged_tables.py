"""Every folder of tables ships in the wheel: a folder left out of pyproject's force-include
works from a checkout and fails where the package is installed."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_SHIPPED = {"build", "upstream"}  # the builder and the facts it reads


def test_every_table_folder_is_in_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    folders = {f"mappings/{p.name}" for p in (ROOT / "mappings").iterdir()
               if p.is_dir() and p.name not in NOT_SHIPPED and (any(p.glob("*.toml")) or any(p.glob("*.json")))}
    assert folders - set(shipped) == set()
    assert all(shipped[f] == f"ascend_lsp/{f}" for f in folders)
