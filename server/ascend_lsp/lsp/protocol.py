"""The JSON-RPC side of the server. pygls drops a message whose params do not fit the LSP
types (a negative position, a missing field) without a word to the client; here a request
is answered with an `InvalidParams` error that says what was wrong, and a `didChange` keeps
its valid changes, with out-of-range positions clamped into the document as LSP does for
positions past the end of a line (a change without text cannot be applied and is dropped,
logged)."""

from __future__ import annotations

import logging
from typing import Any

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

from .text_store import Workspace

logger = logging.getLogger(__name__)
MAX_UINTEGER = 2**31 - 1
DROPPED = object()  # a message answered or discarded while it was read


class Protocol(LanguageServerProtocol):
    @property
    def workspace(self) -> Workspace:
        workspace = super().workspace
        if not isinstance(workspace, Workspace):
            # pygls builds its own; ours differs only in the documents it creates.
            workspace.__class__ = Workspace
        return workspace  # type: ignore[return-value]

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            method = data.get("method")
            problem = _describe(error)
            if "id" in data and isinstance(method, str):
                self._send_response(data["id"], None,
                                    JsonRpcInvalidParams(f"{method}: {problem}").to_response_error())
                return DROPPED
            if method == types.TEXT_DOCUMENT_DID_CHANGE:
                salvaged = self._salvage_change(data)
                if salvaged is not None:
                    return salvaged
            logger.warning("ignored %s with invalid params: %s", method, problem)
            return DROPPED

    def handle_message(self, message: Any) -> None:
        if message is not DROPPED:
            super().handle_message(message)

    def _salvage_change(self, data: dict[str, Any]) -> Any:
        params = data.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("contentChanges"), list):
            return None
        changes = [c for c in map(_clamped, params["contentChanges"]) if c is not None]
        if len(changes) < len(params["contentChanges"]):
            logger.warning("%s: dropped a change without text; the server's copy may differ until the "
                           "document is reopened", params.get("textDocument"))
        try:
            return self._converter.structure({**data, "params": {**params, "contentChanges": changes}},
                                             types.DidChangeTextDocumentNotification)
        except Exception:  # the document identifier itself is unusable
            return None


def _clamped(change: Any) -> dict | None:
    if not isinstance(change, dict) or not isinstance(change.get("text"), str):
        return None
    if "range" not in change:
        return {"text": change["text"]}
    rng = change["range"]
    try:
        return {"text": change["text"], "range": {
            end: {key: min(max(int(rng[end][key]), 0), MAX_UINTEGER) for key in ("line", "character")}
            for end in ("start", "end")}}
    except (TypeError, KeyError, ValueError, OverflowError):
        return None


def _describe(error: JsonRpcException) -> str:
    cause = error.__cause__
    if isinstance(cause, cattrs.ClassValidationError):
        return "; ".join(cattrs.transform_error(cause))
    return str(cause or error)
