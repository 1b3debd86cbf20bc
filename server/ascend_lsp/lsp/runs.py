""""Run on NPU" in the editor: a code lens above each function that can run without
arguments, the `ascend-lsp.run` command (a function, or a selection), progress that can
be cancelled, and the graded result as a RUN001 diagnostic on the function's name with
the per-output table in its hover. "Find the layer" (`ascend-lsp.runLayers`, a second lens)
records every module call too: the first divergent module is a RUN002 diagnostic on the
line that constructs it, with the per-layer table in its hover; its answer names the run's
page (`ascend-lsp.runView`: the table and a plot of the error along the network, run_view.py),
which the VS Code extension opens beside the code.

The runner's worker runs the code in its own process; this server only talks to it
(`ascend_lsp.runner` imports neither torch nor mindspore here). Nothing runs without an
explicit command, and nothing at all when the client says the workspace is untrusted.
"""

from __future__ import annotations

import ast
import asyncio
import fnmatch
import os
import secrets
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import cattrs
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcInvalidParams

from ..engine.model import Severity
from .documents import subject_path, too_large, workspace_folders
from .run_marks import LayerMark, RunMark

if TYPE_CHECKING:
    from .language_server import AscendLanguageServer

RUN_COMMAND = "ascend-lsp.run"
LAYERS_COMMAND = "ascend-lsp.runLayers"
VIEW_COMMAND = "ascend-lsp.runView"
SEVERITY = {"passed": Severity.INFO, "warning": Severity.WARNING, "error": Severity.ERROR, "failed": Severity.ERROR}


def enclosing_function(text: str, line: int) -> str | None:
    """The top-level function whose body holds 0-based `line`."""
    from ..runner.targets import parsed

    tree = parsed(text)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            if first <= line <= node.end_lineno - 1:
                return node.name
    return None


def register(server: AscendLanguageServer) -> None:
    runs = server.runs
    layer_results: dict[str, dict] = {}  # uri → the document's last per-layer result, for its view

    def allowed() -> str | None:
        options = server.settings.options
        if not options.trusted:
            return "Run on NPU is off in an untrusted workspace."
        return None

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
    def code_lens(params: types.CodeLensParams) -> list[types.CodeLens]:
        options = server.settings.options
        document = server.workspace.text_documents.get(params.text_document.uri)
        if document is None or allowed() or not options.runner.code_lens or too_large(document.source):
            return []
        from ..runner import extract_targets

        patterns = options.runner.functions
        return [types.CodeLens(range=types.Range(types.Position(line, 0), types.Position(line, 0)),
                               data={"uri": document.uri, "function": name, **layers})
                for name, line in extract_targets(document.source)
                if not patterns or any(fnmatch.fnmatchcase(name, p) for p in patterns)
                for layers in ({}, {"layers": "module"})]

    @server.feature(types.CODE_LENS_RESOLVE)
    def resolve(lens: types.CodeLens) -> types.CodeLens:
        target = server.settings.options.runner.target
        if isinstance(lens.data, dict) and lens.data.get("layers"):
            lens.command = types.Command(title="Run on NPU: find the layer", command=LAYERS_COMMAND,
                                         arguments=[lens.data])
            return lens
        lens.command = types.Command(title=f"▶ Run on NPU ({target})" if target != "npu" else "▶ Run on NPU",
                                     command=RUN_COMMAND, arguments=[lens.data])
        return lens

    @server.command(LAYERS_COMMAND)
    async def run_layers(*args) -> dict:
        """As `ascend-lsp.run`, recording every module call and locating the first divergence."""
        request = run_request(LAYERS_COMMAND, args)
        return await execute({**request, "layers": request.get("layers") if request.get("layers") == "api" else "module"})

    @server.command(VIEW_COMMAND)
    def run_view(*args) -> dict:
        """The page of a per-layer run (`view` in a "find the layer" answer): {title, html}."""
        request = args[0] if len(args) == 1 and isinstance(args[0], dict) else {}
        result = layer_results.get(request.get("uri"))
        if result is None or result["entry"] != request.get("entry"):
            raise JsonRpcInvalidParams(f"{VIEW_COMMAND}: no per-layer run of {request.get('entry')!r} in "
                                       f"{request.get('uri')!r}; the argument is the `view` of a run's answer")
        from .run_view import run_view_html

        return {"title": f"Layers: {result['entry']}", "html": run_view_html(result, secrets.token_urlsafe(18))}

    @server.command(RUN_COMMAND)
    async def run(*args) -> dict:
        """Arguments: {uri, function} (a lens), or {uri, range} (a selection; an empty range
        runs the function around the cursor)."""
        return await execute(run_request(RUN_COMMAND, args))

    async def execute(request: dict) -> dict:
        refused = allowed()
        if refused:
            server.window_show_message(types.ShowMessageParams(types.MessageType.Warning, refused))
            return {"status": "refused", "message": refused}
        document = server.workspace.text_documents.get(request["uri"])
        if document is None:
            return {"status": "failed", "message": "run: no such open document"}
        job = make_job(server, document, request)
        if isinstance(job, str):
            server.window_show_message(types.ShowMessageParams(types.MessageType.Warning, job))
            return {"status": "failed", "message": job}
        result = await run_with_progress(server, job)
        from ..runner import format_markdown, format_summary

        summary = format_summary(result)
        server.window_log_message(types.LogMessageParams(types.MessageType.Info, f"{job.entry}: {summary}"))
        function = job.function or enclosing_function(document.source, (job.lines or (1,))[0] - 1)
        if function:
            runs.marks.setdefault(document.uri, {})[function] = RunMark(
                function, SEVERITY.get(result.status, Severity.ERROR), summary, format_markdown(result),
                run_data(result), layer_mark(result, job.path))
            server.scheduler.runs_changed(document.uri)
        answer = {"status": result.status, "message": summary}
        if result.layers is not None:
            layer_results[document.uri] = result.to_dict()
            answer["view"] = {"uri": document.uri, "entry": job.entry}
        return answer


def run_request(command: str, args: tuple) -> dict:
    """The command's argument, {uri, function} or {uri, range} (an LSP range, turned into
    one), or an InvalidParams error that says what is wrong with it."""
    request = args[0] if len(args) == 1 and isinstance(args[0], dict) else None
    if request is None or not isinstance(request.get("uri"), str):
        raise JsonRpcInvalidParams(f"{command}: the argument must be {{uri, function}} or {{uri, range}}")
    function, rng = request.get("function"), request.get("range")
    if function is not None:
        if not isinstance(function, str) or not function.isidentifier():
            raise JsonRpcInvalidParams(f"{command}: `function` must be a function's name, got {function!r}")
        return request
    if rng is None:
        raise JsonRpcInvalidParams(f"{command}: give a `function` or a `range`")
    try:
        return {**request, "range": converters.get_converter().structure(rng, types.Range)}
    except cattrs.ClassValidationError as exc:  # a missing key, a wrong type, a negative number
        raise JsonRpcInvalidParams(f"{command}: `range` is not an LSP range: "
                                   f"{'; '.join(cattrs.transform_error(exc, path='range'))}") from None
    except Exception as exc:  # not even an object
        raise JsonRpcInvalidParams(f"{command}: `range` is not an LSP range: {exc}") from None


def layer_mark(result, path: str) -> LayerMark | None:
    """RUN002 for the first divergence (else the first warning) when this document constructs it."""
    layer = result.divergence or result.warning
    if layer is None or not layer.source or layer.source.get("path") != path:
        return None
    from ..runner.layers import layer_label

    label = "first divergence" if layer is result.divergence else "first warning"
    summary = f"Run on {result.target}{' (emulated)' if result.emulated else ''}: {label}: {layer_label(layer)} " \
              f"{layer.verdict}: {layer.reason}"
    call = layer.call_source or {}
    return LayerMark(layer.source["line"] - 1, SEVERITY["error" if layer.verdict == "ERROR" else "warning"], summary,
                     {"module": layer.module, "class": layer.cls, "verdict": layer.verdict,
                      "call_line": call.get("line"), "call_path": call.get("path")})


def run_data(result) -> dict:
    """What a client (or a code action) may want of a result, as plain JSON."""
    return {"status": result.status, "target": result.target, "emulated": result.emulated, "code": result.code,
            "outputs": [{"path": o.path, "verdict": o.verdict, "reason": o.reason} for o in result.outputs]}


def make_job(server: AscendLanguageServer, document, request: dict):
    """The runner job for a run request, or a message saying why there is none."""
    from ..runner import Emulation, Job, extract_targets

    reason = too_large(document.source)
    if reason is not None:
        return f"Run on NPU: {Path(subject_path(document.uri) or document.uri).name} is {reason}."

    options = server.settings.options.runner
    path = subject_path(document.uri) or "<untitled>.py"
    # emulate follows the project's `chip` (fp16 saturation on 910A/310P, HF32 on A2/A3)
    chip = server.settings.for_path(subject_path(document.uri)).chip if options.target == "emulate" else None
    folder = project_folder(server, subject_path(document.uri))
    interpreter = options.interpreter
    if interpreter and os.sep in interpreter and not os.path.isabs(interpreter) and folder:
        interpreter = os.path.join(folder, interpreter)  # `.venv/bin/python`: the project's, not the server's folder's
    common = dict(path=path, text=document.source, target=options.target, timeout=float(options.timeout),
                  cwd=folder, emulation=Emulation(chip=chip), interpreter=interpreter, command=options.command,
                  layers=request.get("layers") if request.get("layers") in ("module", "api") else None)
    if request.get("function"):
        return Job(function=request["function"], **common)
    rng = request["range"]
    first, last = sorted((rng.start, rng.end), key=lambda p: (p.line, p.character))
    start, end = first.line, last.line
    if first != last:
        if end > start and last.character == 0:
            end -= 1  # a selection that ends at the start of a line stops on the line above
        return Job(lines=(start + 1, end + 1), **common)
    function = enclosing_function(document.source, start)
    if function is None or function not in {name for name, _ in extract_targets(document.source)}:
        return "Run on NPU: put the cursor in a function that needs no arguments, or select the code to run."
    return Job(function=function, **common)


def project_folder(server: AscendLanguageServer, path: str | None) -> str | None:
    """Where a run of `path` works: the workspace folder holding it (the server itself runs
    outside the workspace, so that nothing there is imported into it), else the file's folder."""
    if not path:
        return server.workspace.root_path
    real = os.path.realpath(path)
    inside = [f for f in workspace_folders(server.workspace)
              if os.path.commonpath([real, os.path.realpath(f)]) == os.path.realpath(f)]
    return max(inside, key=len) if inside else os.path.dirname(real)


async def run_with_progress(server: AscendLanguageServer, job):
    """Run the job in a thread with `$/progress`; the client's cancel kills the worker."""
    loop = asyncio.get_running_loop()
    cancel = threading.Event()
    token = None
    caps = server.client_capabilities.window
    if caps is not None and caps.work_done_progress:
        token = f"ascend-lsp-run-{uuid.uuid4().hex}"
        try:
            await server.work_done_progress.create_async(token)
        except Exception:  # the client refused: run without a progress bar
            token = None
    if token is not None:
        server.work_done_progress.begin(token, types.WorkDoneProgressBegin(
            title=f"Run on NPU: {job.entry}", message=f"target {job.target}", cancellable=True))
        server.work_done_progress.tokens[token].add_done_callback(lambda _future: cancel.set())

    def progress(message: str) -> None:
        if token is not None:
            loop.call_soon_threadsafe(server.work_done_progress.report, token,
                                      types.WorkDoneProgressReport(message=message))

    try:
        return await loop.run_in_executor(None, lambda: server.runs.pool.run(job, cancel, progress))
    finally:
        if token is not None:
            server.work_done_progress.end(token, types.WorkDoneProgressEnd())
            server.work_done_progress.tokens.pop(token, None)
