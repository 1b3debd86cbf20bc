"""setattr with undo: what a run patches in torch or MindSpore is restored after it."""

from __future__ import annotations


class Patches:
    """setattr with undo, so a warm worker is clean again after each run."""

    def __init__(self) -> None:
        self.saved: list[tuple[object, str, object]] = []

    def __enter__(self):
        return self

    def set(self, owner, name: str, value) -> None:
        if hasattr(owner, name):
            self.saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, value)

    def __exit__(self, *exc):
        for owner, name, value in reversed(self.saved):
            setattr(owner, name, value)
        self.saved.clear()
