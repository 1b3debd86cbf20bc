"""A project's Python files read in a process of their own (project.read_python_facts): the
reading, 2-3 s of pure Python over a repository the size of transformers, then holds no lock the
server's analyses need, on a second core, and yields the processor to them. The child is
`python -I` with the folder of this package alone on its path (the reading needs only the
standard library), told the project by its arguments, and answers with the pickled facts on its
standard output; it ends when the reading does (a server killed meanwhile leaves no process
behind for long). It runs no module of the project and nothing the project names."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import sys

from ..project import PythonFacts

# at a lower priority than the server's analyses: the reading is background work (os.nice: POSIX)
CHILD = ("import json, os, pickle, sys; hasattr(os, 'nice') and os.nice(10); sys.path[:0] = json.loads(sys.argv[1]); "
         "from ascend_lsp.project import read_python_facts; "
         "sys.stdout.buffer.write(pickle.dumps(read_python_facts(sys.argv[2], tuple(json.loads(sys.argv[3])))))")


class ReadFailed(Exception):
    """The child could not be started or gave no facts."""


async def read_apart(root: str, exclude: tuple[str, ...], running: set[asyncio.subprocess.Process]) -> PythonFacts:
    """The facts, read by a child process (kept in `running` while it runs); ReadFailed when none
    could be started or it did not answer."""
    # the folder that holds this package, alone: its reading needs nothing but the standard library
    paths = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-I", "-c", CHILD, json.dumps(paths), root, json.dumps(list(exclude)),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=os.path.dirname(os.path.abspath(__file__)))
    except OSError as exc:
        raise ReadFailed(f"no process: {exc}") from None
    running.add(child)
    try:
        out, err = await child.communicate()
    finally:
        running.discard(child)
    if child.returncode != 0:
        raise ReadFailed(f"exit {child.returncode}: {err.decode('utf-8', 'replace')[-500:]}")
    try:
        facts = pickle.loads(out)
    except Exception as exc:  # anything that is not the facts is no answer
        raise ReadFailed(f"no facts in the answer: {exc}") from None
    if not isinstance(facts, PythonFacts):
        raise ReadFailed("no facts in the answer")
    return facts


def stop(running: set[asyncio.subprocess.Process]) -> None:
    """End the readings still running (the server is shutting down)."""
    for child in list(running):
        if child.returncode is None:
            child.kill()
