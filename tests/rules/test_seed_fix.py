"""NPU701's fix completes the seeding: run the fixed fixture's seeding function with real
torch and compare every generator with msprobe's own `seed_all` (mindstudio-probe)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FIXED = Path(__file__).parent / "fixtures" / "NPU701.fixed.py"
SCRIPT = """
import os, random, sys
import numpy as np
import torch
from msprobe.pytorch import seed_all

namespace = {}
exec(compile(open(sys.argv[1], encoding="utf-8").read(), sys.argv[1], "exec"), namespace)

def draws():
    return (random.random(), float(np.random.rand()), torch.randint(0, 2**30, (4,)).tolist(),
            os.environ.get("PYTHONHASHSEED"))

namespace["set_seeds"](77)
fixed = draws()
random.random(); np.random.rand(); torch.rand(8)  # move every stream on
os.environ.pop("PYTHONHASHSEED")
seed_all(77)
print(repr(fixed == draws()), repr(fixed))
"""


@pytest.mark.torch
def test_fixed_seeding_matches_msprobe_seed_all() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("msprobe.pytorch")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(FIXED)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    same, drawn = done.stdout.strip().splitlines()[-1].split(" ", 1)
    assert same == "True", drawn
    assert "'77'" in drawn  # PYTHONHASHSEED came from the inserted block
