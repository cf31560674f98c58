# The two commands a newcomer runs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CB := $(BIN)/customs-batch

.PHONY: demo test lint typecheck pytest install install-dev fuzz-sandbox bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

install-dev: $(VENV)/.installed-dev

## demo: the main job on examples/ against the embedded sandbox
demo: install
	cd examples && ../$(CB) validate .
	cd examples && ../$(CB) render manifests/ --format yaml

## test: lint, type checks and the whole test suite
test: install-dev lint typecheck pytest

lint:
	$(BIN)/ruff check customs_batch tests benchmarks
	$(BIN)/ruff format --check customs_batch tests benchmarks

typecheck:
	$(BIN)/mypy

pytest:
	$(BIN)/pytest

clean:
	rm -rf $(VENV) build dist .mypy_cache .ruff_cache .pytest_cache
