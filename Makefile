# paperkit — the two README commands are `make demo` and `make test`; everything installs itself.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: help venv lock demo test test-quick test-slow test-timing lint bench completions man check-generated examples clean distclean

help:  ## list the targets
	@grep -E '^[a-z -]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18

# The environment is rebuilt when pyproject.toml or constraints.txt changes. constraints.txt pins every
# dependency CI and developers install (refresh it with 'make lock'); torch is left to its range in
# pyproject.toml so that a GPU machine keeps the CUDA build it installed first (see README).
$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test,all]'
	@touch $@

venv: $(STAMP)  ## create/update .venv with paperkit, its optional engines and the test tools

lock:  ## re-resolve every dependency in a scratch venv and rewrite constraints.txt
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet --disable-pip-version-check -e '.[test,all]'
	{ echo "# Pinned by 'make lock' from pyproject.toml; 'make venv' installs with it. torch is left to its range."; \
	  .lock-venv/bin/pip freeze --exclude-editable --disable-pip-version-check | grep -viE '^(torch|pip|setuptools|wheel)=='; } > constraints.txt
	rm -rf .lock-venv

demo: $(STAMP)  ## a short end-to-end run of every available command
	@for step in examples/demo/*.sh; do \
	  echo "== $$step" >&2; PATH="$(abspath $(BIN)):$$PATH" bash -euo pipefail "$$step"; \
	done
	@echo "== demo finished" >&2

test: $(STAMP) lint  ## lint, then the test suite CI runs (all but heavy and timing tests)
	$(BIN)/pytest -m "not timing and not heavy" $(PYTEST_ARGS)

test-quick: $(STAMP)  ## the test suite without tests marked slow, heavy or timing
	$(BIN)/pytest -m "not slow and not heavy and not timing" $(PYTEST_ARGS)

test-slow: $(STAMP)  ## the tests marked slow or heavy (heavy: minutes of training, never in CI)
	$(BIN)/pytest -m "slow or heavy" $(PYTEST_ARGS)

test-timing: $(STAMP)  ## only the wall-clock ratio tests, best run on a quiet machine
	$(BIN)/pytest -m timing $(PYTEST_ARGS)

lint: $(STAMP)  ## ruff on all Python code
	$(BIN)/ruff check lib cli tests benchmarks examples

bench: $(STAMP)  ## every benchmark, side by side with its baseline/peer (prints ratios)
	@for b in benchmarks/*.py; do echo "== $$b" >&2; $(PY) "$$b"; done

completions man: $(STAMP)  ## regenerate completions/ and man/ from the click tree
	$(PY) -m paperkit_cli.gen

check-generated: $(STAMP)  ## fail if completions/ or man/ are stale
	$(PY) -m paperkit_cli.gen --check

examples: $(STAMP)  ## run every example experiment (slow; see examples/README.md)
	PATH="$(abspath $(BIN)):$$PATH" $(MAKE) -C examples all

clean:  ## remove caches and example/benchmark outputs (keeps .venv)
	rm -rf build dist .pytest_cache .ruff_cache .hypothesis benchmarks/out
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +
	find . -path ./$(VENV) -prune -o -name '*.egg-info' -type d -exec rm -rf {} +
	$(MAKE) -C examples clean

distclean: clean  ## also remove .venv
	rm -rf $(VENV)
