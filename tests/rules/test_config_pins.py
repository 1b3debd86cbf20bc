"""NPU803 reports FlashAttention-2 only when the project's transformers pin allows a version in a
broken window: the pin and the windows are ranges, and they must meet."""

from __future__ import annotations

import pytest

from ascend_lsp.engine.versions import overlap

WINDOWS = ["<4.51.0", ">=4.54.0,<=4.55.2"]


@pytest.mark.parametrize(("pin", "window"), [
    (">=4.55.0,<=5.8.0", ">=4.54.0,<=4.55.2"),
    ("<5", "<4.51.0"),
    ("==4.45.0", "<4.51.0"),
    ("==4.55.*", ">=4.54.0,<=4.55.2"),
    ("~=4.54.0", ">=4.54.0,<=4.55.2"),
    (">4.54.0,<4.56", ">=4.54.0,<=4.55.2"),
    ("=4.54", ">=4.54.0,<=4.55.2"),  # conda's prefix
    (">=4.51.0,!=4.52.0", ">=4.54.0,<=4.55.2"),
    (">=4.55.3", None),
    ("==4.53.2", None),
    (">=4.51.0,<4.54", None),
    (">4.55.2", None),
    ("latest", None),  # not a specifier: no finding
])
def testoverlap(pin: str, window: str | None) -> None:
    assert overlap(pin, WINDOWS) == window
