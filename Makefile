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

.PHONY: help venv demo test test-quick lint bench completions man check-generated examples clean distclean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18

# The environment is rebuilt when pyproject.toml changes. torch's range resolves to the CPU build
# where one is available; see README for GPU machines.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,all]'
	@touch $@

venv: $(STAMP)  ## create/update .venv with paperkit, its optional engines and the test tools

demo: $(STAMP)  ## a short end-to-end run of every available command
	@for step in examples/demo/*.sh; do \
	  echo "== $$step" >&2; PATH="$(abspath $(BIN)):$$PATH" bash -euo pipefail "$$step"; \
	done
	@echo "== demo finished" >&2

test: $(STAMP) lint  ## lint, then the whole test suite
	$(BIN)/pytest $(PYTEST_ARGS)

test-quick: $(STAMP)  ## the test suite without tests marked slow
	$(BIN)/pytest -m "not slow" $(PYTEST_ARGS)

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
