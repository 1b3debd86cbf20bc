"""The language server the features register on (server.py builds it): the shared server
object (server_base.py) with the scheduler that analyses its open documents."""

from __future__ import annotations

from .scheduler import Scheduler
from .server_base import ServerBase


class AscendLanguageServer(ServerBase):
    def __init__(self) -> None:
        super().__init__()
        self.scheduler = Scheduler(self)
        self.on_shutdown += [self.scheduler.shutdown, self.runs.close]

    def settings_changed(self) -> None:
        """Re-diagnose every open document; pulling clients are asked to pull again."""
        self._shown.clear()
        self.scheduler.refresh_all()
        self.ask_to_pull()
