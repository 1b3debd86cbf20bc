"""How a worker process is started: a local interpreter or a command template.

The worker is shipped as source by default, so neither the user's interpreter nor a
remote host needs ascend_lsp installed: the command runs BOOTSTRAP (`python -c`), which
reads the worker's source as the first stdin line (a JSON string) and executes it.

Templates are split like a shell command line, then two placeholders are substituted:
  {bootstrap}         the bootstrap code as one argument (launchers that exec directly:
                      `srun -p npu python3 -c {bootstrap}`)
  {bootstrap_quoted}  the same, shell-quoted, for launchers that hand the command line to
                      a remote shell: `ssh ascend-host python3 -c {bootstrap_quoted}`
Without a placeholder the command must start an installed worker itself:
`ssh ascend-host /opt/venv/bin/python -m ascend_lsp.runner.worker`.
"""

from __future__ import annotations

import functools
import json
import shlex
from dataclasses import dataclass

from .bundle import SCRIPT_NAME, worker_script

BOOTSTRAP = f'import sys,json;exec(compile(json.loads(sys.stdin.readline()),"{SCRIPT_NAME}","exec"))'


@dataclass(frozen=True)
class Launch:
    argv: tuple[str, ...]
    ships_source: bool  # the first stdin line must be the worker's source
    local: bool  # a local interpreter: the memory limit is set before exec

    def describe(self) -> str:
        return " ".join(shlex.quote(a) if a not in (BOOTSTRAP, shlex.quote(BOOTSTRAP)) else "{bootstrap}"
                        for a in self.argv)


def local_launch(interpreter: str) -> Launch:
    return Launch((interpreter, "-c", BOOTSTRAP), ships_source=True, local=True)


def template_launch(template: str) -> Launch:
    argv = shlex.split(template)
    if not argv:
        raise ValueError("empty worker command template")
    substituted = tuple(a.replace("{bootstrap_quoted}", shlex.quote(BOOTSTRAP)).replace("{bootstrap}", BOOTSTRAP)
                        for a in argv)
    return Launch(substituted, ships_source=any("{bootstrap" in a for a in argv), local=False)


@functools.cache
def worker_source_line() -> bytes:
    """The first stdin line for a shipped worker: its script as a JSON string."""
    return (json.dumps(worker_script()) + "\n").encode()
