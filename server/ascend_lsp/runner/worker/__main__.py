"""`python -m ascend_lsp.runner.worker`: an installed worker (a command template without
{bootstrap}) runs the very script the client ships, so both behave alike."""

from ..bundle import SCRIPT_NAME, worker_script

exec(compile(worker_script(), SCRIPT_NAME, "exec"), {"__name__": "__main__"})
