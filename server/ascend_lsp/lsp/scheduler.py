"""Analysis off the event loop: a debounce per subject (leading edge: an isolated edit is
analysed at once), one analysis at a time per subject (each the incremental base of the
next), and results of a superseded document version or settings generation never
published."""

from __future__ import annotations

import asyncio
import ctypes
import traceback
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING

from lsprotocol import types

from ..analysis import analyze
from ..engine.analyzer import Analysis, TextEdit
from ..knowledge.files import TableError
from .diagnostics import Result, convert, unchecked_reports
from .documents import Documents, Subject, language_kind, subject_path, too_large
from .snapshot import Snapshot

if TYPE_CHECKING:
    from .server_base import ServerBase


def compute(snapshot: Snapshot) -> Result:
    """The analysis and its diagnostics. Runs in a worker thread. A text over the size
    limit is not analysed: its one diagnostic says so."""
    reason = too_large(snapshot.text)
    if reason is not None:
        release_memory()  # the message that made it so large was as large
        return Result(snapshot.version, snapshot.generation, Analysis([]), snapshot, unchecked_reports(snapshot, reason),
                      reason)
    analysis = analyze(snapshot.text, snapshot.settings, snapshot.path,
                       previous=snapshot.previous, edit=snapshot.edit, project=snapshot.project, kind=snapshot.kind)
    result = Result(snapshot.version, snapshot.generation, analysis, snapshot, convert(analysis, snapshot))
    if snapshot.edit is None:
        release_memory()  # a full analysis parsed everything; also the one after undoing a paste
    return result


def release_memory() -> None:
    """Give the memory a parse used back to the system: glibc keeps freed heap memory for
    the process, so a 1 MiB paste would hold on to its AST's worth for good. Microseconds
    when there is nothing to give back."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def _libc_malloc_trim():
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_malloc_trim = _libc_malloc_trim()


class Scheduler:
    def __init__(self, server: ServerBase) -> None:
        self.server = server
        # Two threads: one analysis may wait on the GIL while the other parses, so a
        # second document is not queued behind a long full analysis.
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ascend-lsp-analysis")
        self._logged: set[str] = set()
        self.stopped = False

    @property
    def debounce(self) -> float:
        return self.server.settings.options.debounce_ms / 1000

    # --- events ------------------------------------------------------------------------
    def changed(self, subject: Subject, version: int, edit: TextEdit | None, delay: float | None = None) -> None:
        """A new version. After a quiet spell it is analysed at once; an edit that follows
        another within the debounce waits until the edits pause, so a burst (a paste, a
        multi-cursor edit, fast typing) costs one analysis, not one per change."""
        subject.note_edit(version, edit)
        now = asyncio.get_running_loop().time()
        quiet = now - subject.last_change >= self.debounce
        subject.last_change = now
        self.schedule(subject, delay if delay is not None else 0 if quiet else self.debounce)

    def schedule(self, subject: Subject, delay: float) -> None:
        if self.stopped:
            return  # shut down: a reading that ends now (a project's facts) starts no analysis
        if subject.running:
            return  # `_finished` schedules the next analysis
        if subject.timer is not None:
            subject.timer.cancel()
        subject.timer = asyncio.get_running_loop().call_later(delay, self._start, subject)

    def runs_changed(self, uri: str) -> None:
        """A "Run on NPU" result arrived: diagnose the document again to show it."""
        subject = self.server.documents.subjects.get(uri)
        if subject is not None:
            subject.runs_stamp += 1
            self.schedule(subject, 0)
            self.server.ask_to_pull()

    def refresh_all(self) -> None:
        """Analyse every open subject again (the settings changed)."""
        for subject in list(self.server.documents.subjects.values()):
            self.schedule(subject, 0)

    def closed(self, subject: Subject) -> None:
        if subject.timer is not None:
            subject.timer.cancel()
        self._resolve(subject, None)
        if not self.server.pull_diagnostics:
            for uri in subject.published:
                self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))
        subject.published.clear()

    def is_fresh(self, subject: Subject) -> bool:
        result = subject.result
        return (result is not None and result.generation == self.server.settings.generation
                and result.version == Documents.version(self.server.workspace, subject)
                and result.snapshot.runs_stamp == subject.runs_stamp)

    async def current(self, subject: Subject) -> Result | None:
        """The result for the subject as it is now; an analysis waiting out its debounce
        starts at once, because a client is asking."""
        if self.is_fresh(subject):
            return subject.result
        waiter = asyncio.get_running_loop().create_future()
        subject.waiters.append(waiter)
        if not subject.running:
            if subject.timer is not None:
                subject.timer.cancel()
            self._start(subject)
        return await waiter

    # --- running -----------------------------------------------------------------------
    def _snapshot(self, subject: Subject) -> Snapshot | None:
        server = self.server
        found = Documents.text_and_views(server.workspace, subject)
        if found is None:
            return None
        version, text, views = found
        edit = subject.pending_edit(version) if subject.base is not None else None
        runs = tuple(server.runs.marks.get(subject.uri, {}).values())
        path = subject_path(subject.uri)
        settings = server.settings.for_path(path)
        return Snapshot(version, server.settings.generation, text, path, settings, views,
                        subject.base if edit is not None else None, edit, server.workspace.position_encoding,
                        runs, subject.runs_stamp, server.projects.for_path(path, settings),
                        language_kind(server.workspace, subject.uri), server.related_information)

    def _start(self, subject: Subject) -> None:
        subject.timer = None
        if self.server.documents.subjects.get(subject.uri) is not subject:
            return  # closed meanwhile
        snapshot = self._snapshot(subject)
        if snapshot is None:
            self._resolve(subject, None)
            return
        subject.running = True
        future = asyncio.get_running_loop().run_in_executor(self.pool, compute, snapshot)
        future.add_done_callback(partial(self._finished, subject, snapshot))

    def _finished(self, subject: Subject, snapshot: Snapshot, future: asyncio.Future) -> None:
        subject.running = False
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            # The engine promises not to raise but for a table it cannot use (the user's
            # own, named in the message); otherwise say so, start afresh next time, and do
            # not retry this same version forever.
            if isinstance(error, TableError):
                self.server.show_config_error(f"ascend-lsp: {error}")
            else:
                self.log_once("".join(traceback.format_exception(error)), types.MessageType.Error)
            subject.base, subject.edits = None, [(v, None) for v, _ in subject.edits]
            failed = True
        else:
            result: Result = future.result()
            subject.settle(snapshot.version, result.analysis)
            subject.result = result
            for message in result.analysis.errors:
                # once per failing rule, not per place it failed at
                rule = message.partition(" failed")[0]
                self.log_once(f"a rule failed (the other rules still ran): {message}", types.MessageType.Error, rule)
                self.server.show_config_error(f"ascend-lsp: {rule} failed; its findings are missing (details in "
                                              "the log)")
            failed = False
        if self.server.documents.subjects.get(subject.uri) is not subject:
            return
        if self.is_fresh(subject):
            self._resolve(subject, subject.result)
            if not self.server.pull_diagnostics:
                self.publish(subject, subject.result)
        elif failed and snapshot.version == Documents.version(self.server.workspace, subject):
            self._resolve(subject, None)
        else:
            loop = asyncio.get_running_loop()
            delay = 0 if subject.waiters else max(0.0, subject.last_change + self.debounce - loop.time())
            self.schedule(subject, delay)

    def _resolve(self, subject: Subject, result: Result | None) -> None:
        waiters, subject.waiters = subject.waiters, []
        for waiter in waiters:
            if not waiter.done():  # a cancelled request leaves a cancelled waiter
                waiter.set_result(result)

    def publish(self, subject: Subject, result: Result) -> None:
        views = {view.uri: view for view in result.snapshot.views}
        for uri, report in result.reports.items():
            if subject.published.get(uri) != report.result_id:
                subject.published[uri] = report.result_id
                self.server.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri, report.items, version=views[uri].version))
        for uri in [u for u in subject.published if u not in result.reports]:  # cells that went away
            del subject.published[uri]
            self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    def log_once(self, message: str, kind: types.MessageType = types.MessageType.Info, key: str = "") -> None:
        if (key or message) not in self._logged:
            self._logged.add(key or message)
            self.server.window_log_message(types.LogMessageParams(kind, message))

    def shutdown(self) -> None:
        self.stopped = True
        for subject in self.server.documents.subjects.values():
            if subject.timer is not None:
                subject.timer.cancel()
            self._resolve(subject, None)
        self.pool.shutdown(wait=False, cancel_futures=True)
