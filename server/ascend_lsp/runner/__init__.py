""""Run on NPU": run a function on a CPU reference and on a target, grade the delta like msprobe.

The client half (this package minus `worker/`) never imports torch, numpy or mindspore;
the worker does, in its own process, and ships as one self-contained script (`bundle.py`).
"""

from .job import Emulation, Job, JobError
from .pool import RunnerPool
from .result_text import format_markdown, format_summary, format_table
from .result import OutputResult, RunResult
from .targets import extract_targets, find_mindspore_pair

__all__ = [
    "Emulation",
    "Job",
    "JobError",
    "OutputResult",
    "RunResult",
    "RunnerPool",
    "extract_targets",
    "find_mindspore_pair",
    "format_markdown",
    "format_summary",
    "format_table",
]
