"""Pure analysis: source text in, findings out. No LSP, no CLI, no I/O beyond the mappings."""

from .analyzer import Analysis, analyze
from .config import Settings
from .model import Applicability, Edit, Finding, Fix, Range, Severity

__all__ = [
    "Analysis",
    "Applicability",
    "Edit",
    "Finding",
    "Fix",
    "Range",
    "Settings",
    "Severity",
    "analyze",
]
