"""The feature a test names, for the opt-in reasons (rules/harmless_calls._names): the same in
every process, whatever order a set of words iterates in under the interpreter's hash seed."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = ("from ascend_lsp.rules.harmless_calls import _names; "
         "print(_names('args.use_apex_amp', {'apex', 'apex_amp', 'amp', 'xformers'}))")


def test_the_longest_word_named_wins_under_every_hash_seed() -> None:
    named = set()
    for seed in ("0", "1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
        named.add(out.stdout.strip())
    assert named == {"apex_amp"}
