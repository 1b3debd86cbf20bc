"""ascend-lsp: find and fix what keeps PyTorch CUDA code from running on Ascend NPUs."""

__version__ = "0.1.0"
# The default address of the rule pages (generated from the rule metadata by rules/docs.py).
# `docs-url` ([tool.ascend-lsp], the editor's settings) or $ASCEND_LSP_DOCS_URL replace it;
# "packaged" links to the copies installed with the package, for use without the network;
# anything else must be an http, https or file address (engine.config.check_docs_url).
DOCS_URL = "https://github.com/ascend-lsp/ascend-lsp/blob/main/docs/rules/{code}.md"
