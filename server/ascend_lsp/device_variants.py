"""Modules a project writes once per device, side by side (`patched_modeling_x_gpu.py` beside
`patched_modeling_x_npu.py`, `x_gpu_patch_config.py` beside `x_npu_patch_config.py`), or once per
collective library (`nccl_checkpoint_engine.py` beside `hccl_checkpoint_engine.py`, `nccl.py` beside
`hccl.py`): the GPU's runs only where the project picks it, and the NPU's is the port
(engine/checker.py off_npu_file). Read from the paths of the project's Python files, in the read
that gives the flags and calls."""

from __future__ import annotations

import hashlib
import os
import re

# a word of the GPU's module's name → the word in its NPU twin's
TWIN_WORDS = {"gpu": "npu", "cuda": "npu", "nccl": "hccl"}
PARTS = re.compile(r"([_\W]+)")  # a file name's words and what separates them


def gpu_variants(root: str, paths: list[str]) -> dict[str, str]:
    """Each module (relative to `root`, with `/`) named for the GPU whose name with `npu` in that
    word's place is a module of the project too, and that one."""
    own = {os.path.relpath(path, root).replace(os.sep, "/") for path in paths}
    found = {}
    for relative in own:
        folder, _, name = relative.rpartition("/")
        stem, _, suffix = name.rpartition(".")
        parts = PARTS.split(stem)
        for i, part in enumerate(parts):
            word = TWIN_WORDS.get(part.lower())
            if word is not None:
                twin = "".join([*parts[:i], word.upper() if part.isupper() else word, *parts[i + 1:]]) + "." + suffix
                sibling = f"{folder}/{twin}" if folder else twin
                if sibling in own:
                    found[relative] = sibling
                    break
    return found


def variants_digest(variants: dict[str, str]) -> str:
    return hashlib.blake2b(repr(sorted(variants.items())).encode(), digest_size=12).hexdigest()
