"""Where the builders read the upstream facts: the one definition.

`DATA` is the vendored copy in `mappings/upstream/`, which every builder reads, so a clean
clone can rebuild the tables. `SHARED` is the project's shared fact folder it is copied
from (`../shared/data` beside the checkout, or `$ASCEND_LSP_SHARED_DATA`); only the
in-step check (`tests/mappings/test_upstream.py`) and `make upstream` look at it.
A builder module imports it as `from upstream import DATA` (the build folder is on sys.path).
"""

from __future__ import annotations

import os
from pathlib import Path

MAPPINGS = Path(__file__).resolve().parent.parent
DATA = MAPPINGS / "upstream"
SHARED = Path(os.environ.get("ASCEND_LSP_SHARED_DATA") or MAPPINGS.parent.parent / "shared" / "data")
# Files in DATA that are not copies of SHARED.
OWN_FILES = frozenset({"PROVENANCE.md"})

