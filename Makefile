# Two entry points, each doing all the set-up on a fresh machine (Python 3.10+, Node 20):
#   make examples   install, then run lsp-check on the bundled CUDA examples
#   make test       install with the test extras (torch 2.13 CPU, MindSpore 2.10 CPU), lint and
#                   type-check the Python (Ruff, mypy), run the Python tests, then the VS Code
#                   extension's (lint, types, unit, package)
# make e2e runs the extension in a real VS Code (code-server in headless Chromium); it
# installs Node 24, code-server and Debian packages on first use (about 4 minutes).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: examples test lint client e2e docs mappings upstream bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.base: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	# torch is pinned to the CPU build (an unpinned torch pulls GBs of CUDA); MindSpore needs numpy<2.
	$(BIN)/pip install -q -e '.[test,torch,mindspore]'
	touch $@ $(VENV)/.base

examples: $(VENV)/.base
	$(BIN)/lsp-check examples/ || test $$? -eq 1

test: lint
	$(BIN)/python -m pytest -q
	$(MAKE) client

lint: $(VENV)/.test  # settings in pyproject.toml
	$(BIN)/ruff check .
	$(BIN)/mypy

client:
	cd client-vscode && npm ci --no-audit --no-fund && npm test

e2e: $(VENV)/.test
	cd client-vscode && E2E_RUNNER_PYTHON=$(abspath $(BIN))/python npm run e2e

docs: $(VENV)/.base
	$(BIN)/python -m ascend_lsp.rules.docs

mappings: $(VENV)/.test  # the tables record what the installed torch and MindSpore say
	$(BIN)/python mappings/build

# Bring the vendored facts (mappings/upstream/) in step with the shared fact folder.
SHARED_DATA ?= $(or $(ASCEND_LSP_SHARED_DATA),../shared/data)
upstream:
	test -d $(SHARED_DATA)
	find mappings/upstream -mindepth 1 ! -name PROVENANCE.md -delete
	cp -R $(SHARED_DATA)/. mappings/upstream/
	chmod -R u+w mappings/upstream

bench: $(VENV)/.base
	$(BIN)/python benchmarks/cli_corpus.py
