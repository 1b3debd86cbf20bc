"""What a worker started by a command template needs of its host, said when a run shows it lacks it.

Such a worker gets the file's text, not its project: it puts the file's folder on `sys.path` and
works in the project folder by their paths on this machine, so a module of the project imports
on the host only when the host has the project at the same path (VS Code Remote-SSH on the host,
a shared file system, a checkout synced to the same path). When the host lacks it, Python's
"No module named" alone would not say so.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

from .job import Job
from .result import RunResult

_MISSING = re.compile(r"No module named '([^']+)'")


def explain_missing_project_module(job: Job, result: RunResult) -> RunResult:
    """`result` with the requirement stated when the host could not import a module that is
    the project's here; otherwise `result` itself."""
    error = result.error or {}
    found = _MISSING.search(error.get("message") or "")
    if result.code != "exception" or error.get("type") != "ModuleNotFoundError" or not found:
        return result
    name = found.group(1)
    for folder in [os.path.dirname(os.path.abspath(job.path))] + ([job.cwd] if job.cwd else []):
        local = project_module(folder, name)
        if local is not None:
            return replace(result, message=f"{result.message}: {name} is this project's ({local}), and the host "
                                           f"that runs the worker has no such file at that path; a worker started "
                                           f"by a command template gets this file's text only, so the host needs "
                                           f"the project at the same path ({folder})")
    return result


def project_module(folder: str, name: str) -> str | None:
    """The file or package folder under `folder` that `import name` finds first, if any."""
    head = os.path.join(folder, name.split(".")[0])
    for path in (os.path.join(head, "__init__.py"), head + ".py"):
        if os.path.isfile(path):
            return path
    return head if os.path.isdir(head) else None  # a namespace package
