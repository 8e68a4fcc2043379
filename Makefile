# Two entry points, each making its own virtual environment (.venv) on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck bench clean

$(BIN)/fabricplan: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

demo: $(BIN)/fabricplan
	$(BIN)/fabricplan compare examples/training-2k/spec.yaml

test: $(BIN)/fabricplan
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy src
	$(BIN)/pytest

bench: $(BIN)/fabricplan
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info
