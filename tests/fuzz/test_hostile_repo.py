"""Every hostile-repository ingredient (fuzz/hostile_repo.py --every: all that go together in
each of three repositories): a real lsp-check and a real server, and every invariant of
docs/security.md checked after each step."""

from __future__ import annotations

import json
import os

from fuzz.hostile_repo import INGREDIENTS, main


def test_every_ingredient_breaks_no_invariant(capsys, tmp_path):
    code = main(["--repos", "3", "--every", "--seed", "5", "--timeout", "120", "--keep", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    assert report["failures"] == [], json.dumps(report["failures"], indent=1)
    assert code == 0
    figures = report["figures"]
    used = {name for name, (_, _, root_only) in INGREDIENTS.items() if os.geteuid() == 0 or not root_only}
    assert {key.removeprefix("ingredient: ") for key in figures if key.startswith("ingredient: ")} == used
    assert figures["repositories"] == 3 and figures["server sessions"] == 3
