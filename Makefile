# The two commands a new user needs: `make demo` and `make test`.
# Everything CI needs is installed from here: a step done by hand is missing on a clean machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint bench clean

$(STAMP): pyproject.toml
	@echo "==> creating $(VENV) and installing firsttoken (a minute or two on a fresh machine)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --progress-bar on --upgrade pip >/dev/null
	$(BIN)/pip install --progress-bar on -e '.[dev]'
	touch $@

install: $(STAMP)

demo: install
	$(BIN)/firsttoken demo

lint: install
	$(BIN)/ruff check monitor dashboard tests benchmarks migrations
	$(BIN)/ruff format --check monitor dashboard tests benchmarks migrations

test: install lint
	$(BIN)/pytest

bench: install
	$(BIN)/python benchmarks/accuracy.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis test-artifacts
