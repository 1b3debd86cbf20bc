"""A progress bar on stderr for long runs. Hand-written (one line redrawn with `\\r`)
rather than rich or tqdm: it is all the CLI needs and costs no import time.

It only appears when stderr is a terminal and the run is still going after DELAY
seconds, so short runs, CI logs and pipes never see it. `LSP_CHECK_PROGRESS_DELAY`
overrides the delay (the tests set it to 0).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

DELAY = 2.0  # seconds before the bar appears
REDRAW = 0.1  # seconds between redraws
WIDTH = 30


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, delay: float | None = None) -> None:
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        if delay is None:
            delay = float(os.environ.get("LSP_CHECK_PROGRESS_DELAY", DELAY))
        self.start = time.monotonic()
        self.show_after = self.start + delay
        self.last_draw = 0.0
        self.drawn = False

    def __call__(self, count: int) -> None:
        self.done += count
        now = time.monotonic()
        if now >= self.show_after and (now - self.last_draw >= REDRAW or self.done >= self.total):
            self.last_draw = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        share = self.done / self.total if self.total else 1.0
        filled = round(WIDTH * share)
        bar = "█" * filled + "░" * (WIDTH - filled)
        self.stream.write(f"\r{bar} {self.done}/{self.total} files  {now - self.start:.0f} s")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Erase the bar so the report that follows starts on a clean line."""
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def wanted(quiet: bool, machine_output_on_stdout: bool, stream: TextIO | None = None) -> bool:
    stream = stream or sys.stderr
    return not quiet and not machine_output_on_stdout and stream.isatty()
