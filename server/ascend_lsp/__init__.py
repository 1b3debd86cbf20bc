"""ascend-lsp: find and fix what keeps PyTorch CUDA code from running on Ascend NPUs."""

__version__ = "0.1.0"
# Rule pages live in the repository, generated from the rule metadata (rules/docs.py).
DOCS_URL = "https://github.com/ascend-lsp/ascend-lsp/blob/main/docs/rules/{code}.md"
