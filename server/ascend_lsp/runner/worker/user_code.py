"""The user's file: compiled with its real path, run as an import, then the entry or the selection."""

from __future__ import annotations

import ast
import linecache
import os
import sys
import textwrap
import types

from .failures import SetupError, SnippetError, syntax_error
from .tensor_values import MISSING, is_tensor_like

class UserCode:
    """The user's file, compiled with its real path so tracebacks point at its lines."""

    def __init__(self, job: dict):
        file = job.get("file") or {}
        self.path = file.get("path") or "<snippet>"
        self.text = file.get("text")
        if self.text is None:
            raise SetupError("bad-job", "job has no file text")
        self.module_name = file.get("module") or "snippet"
        self.cwd = file.get("cwd")
        entry = job.get("entry") or {}
        self.function = entry.get("function")
        self.pair = (job.get("options", {}).get("mindspore") or {}).get("pair")
        self.lines = entry.get("lines")
        linecache.cache[self.path] = (len(self.text), None, self.text.splitlines(True), self.path)
        try:
            self.code = compile(self.text, self.path, "exec")
            self.selection = self._compile_selection() if self.lines else None
        except SyntaxError as exc:
            raise SnippetError("reference", syntax_error(exc)) from None
        if not self.function and not self.lines:
            raise SetupError("bad-job", "job names neither a function nor a line range")

    def _compile_selection(self):
        start, end = self.lines
        block = textwrap.dedent("".join(self.text.splitlines(True)[start - 1:end]))
        tree = ast.parse(block, self.path)
        ast.increment_lineno(tree, start - 1)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = compile(ast.Expression(tree.body.pop().value), self.path, "eval")
        return compile(tree, self.path, "exec"), last

    def execute(self, function: str | None = None):
        """Run the module's top level (as an import: `__main__` blocks stay off), then the entry."""
        module = types.ModuleType(self.module_name)
        module.__file__ = self.path
        folder = os.path.dirname(os.path.abspath(self.path))
        before = set(sys.modules)
        sys.modules[self.module_name] = module
        sys.path.insert(0, folder)
        if self.cwd and os.path.isdir(self.cwd):  # a remote host may not have the folder
            os.chdir(self.cwd)  # relative paths in the user's code mean what they mean in its project
        try:
            exec(self.code, module.__dict__)
            if self.selection is not None and function is None:
                return self._run_selection(module.__dict__)
            return _call_entry(module.__dict__, function or self.function)
        finally:
            sys.path.remove(folder)
            # Forget the user's own modules so the next job sees their edits; leave
            # library modules (torch submodules imported lazily) alone.
            for name in set(sys.modules) - before:
                file = getattr(sys.modules[name], "__file__", None) or ""
                if name == self.module_name or os.path.abspath(file).startswith(folder + os.sep):
                    sys.modules.pop(name, None)

    def _run_selection(self, namespace: dict):
        body, last = self.selection
        before = dict(namespace)
        exec(body, namespace)
        if last is not None:
            return eval(last, namespace)
        # No trailing expression: the result is the tensors the block (re)bound, by name.
        return {name: value for name, value in sorted(namespace.items())
                if is_tensor_like(value) and before.get(name, MISSING) is not value}


def _call_entry(namespace: dict, name: str):
    import inspect

    function = namespace.get(name)
    if not callable(function):
        raise SetupError("bad-job", f"no function {name!r} at the top level of the file")
    required = [p.name for p in inspect.signature(function).parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if required:
        raise SetupError("bad-job", f"{name}() needs arguments ({', '.join(required)}): only functions without "
                                    "required arguments (or fixture-free tests) can run")
    if inspect.iscoroutinefunction(function):
        raise SetupError("bad-job", f"{name}() is async: not supported")
    return function()
