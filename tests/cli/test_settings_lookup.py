"""Each folder's settings and project root are looked for once: a folder without a
pyproject.toml (with [tool.ascend-lsp]) or project marker has its parent's answer, with the
same result as a walk up from every folder on its own."""

from __future__ import annotations

import os
from pathlib import Path

from ascend_lsp.engine.config import Settings
from ascend_lsp.settings_lookup import SettingsResolver
from ascend_lsp.project import Projects, project_root
from ascend_lsp.real_folders import RealFolders
from ascend_lsp.rules import RULE_SET


def folders(root: Path) -> list[Path]:
    made = [root / "a" / "b" / "c", root / "a" / "x" / "y", root / "d"]
    for folder in made:
        folder.mkdir(parents=True)
    return made


def test_a_folder_has_the_settings_of_the_nearest_pyproject_above_it(tmp_path: Path) -> None:
    deep, nested, side = folders(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.ascend-lsp]\nchip = "310P"\n')
    (tmp_path / "a" / "x" / "pyproject.toml").write_text('[tool.ascend-lsp]\nchip = "A3"\n')
    (tmp_path / "a" / "pyproject.toml").write_text('[project]\nname = "a"\n')  # no table: not a settings file
    resolver = SettingsResolver(RULE_SET.prefixes, {"select": ["NPU1"]})
    chips = {str(f.relative_to(tmp_path)): resolver.settings(str(f)).chip for f in (deep, nested, side, tmp_path)}
    assert chips == {"a/b/c": "310P", "a/x/y": "A3", "d": "310P", ".": "310P"}
    assert resolver.settings(str(deep)) is resolver.settings(str(side))  # one Settings per file
    assert resolver.settings(str(nested)).select == ("NPU1",)  # the overrides apply to each
    # Kept until forget(): a settings file added below is read after it.
    (tmp_path / "a" / "b" / "pyproject.toml").write_text('[tool.ascend-lsp]\nchip = "A3"\n')
    assert resolver.settings(str(deep)).chip == "310P"
    resolver.forget()
    assert resolver.settings(str(deep)).chip == "A3"
    assert resolver.settings(str(side)).chip == "310P"


def test_a_fixed_tree_finds_each_folder_root_from_its_parent(tmp_path: Path) -> None:
    deep, nested, side = folders(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "a" / "x" / "setup.py").write_text("")
    files = [str(folder / "f.py") for folder in (deep, nested, side, tmp_path)]
    walked_alone = [project_root(path, Settings()) for path in files]
    real = tmp_path.resolve()
    assert walked_alone == [str(real), str(real / "a" / "x"), str(real), str(real)]
    projects = Projects(fixed=True)
    assert [projects.for_path(path, Settings()).root for path in files] == walked_alone
    # the answers are remembered: a marker added since is not looked for in a fixed tree
    (tmp_path / "a" / "b" / "setup.py").write_text("")
    assert projects.for_path(files[0], Settings()).root == str(real)
    assert Projects().for_path(files[0], Settings()).root == str(real / "a" / "b")


def test_real_folders_are_those_realpath_gives(tmp_path: Path) -> None:
    deep, nested, side = folders(tmp_path)
    (tmp_path / "a" / "link").symlink_to(tmp_path / "a" / "x")  # a link to a folder of the tree
    (side / "up").symlink_to("../a/link/y")  # a relative link through another link
    (side / "loop").symlink_to("loop")
    real = RealFolders()
    asked = [deep, nested, side, tmp_path / "a" / "link" / "y", side / "up", side / "up" / "z", side / "loop",
             tmp_path / "missing" / "m", Path("/")]
    assert [real.of(str(f)) for f in asked] == [os.path.realpath(f) for f in asked]
    assert real.of(str(side / "up")) == str((tmp_path / "a" / "x" / "y").resolve())
