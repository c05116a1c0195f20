# The two commands a new user needs: `make demo` and `make test`.
# Everything CI needs is installed from here: a step done by hand is missing on a clean machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint bench clean browser-deps integration-deps

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

# Debian's Prometheus (with promtool) and Alertmanager, PgBouncer and tinyproxy for the integration tests
# (-m integration). Installed, never started as services: the tests start their own on loopback.
# One apt-get update, only when something is missing, so a second run changes nothing.
INTEGRATION_TOOLS := prometheus promtool prometheus-alertmanager pgbouncer tinyproxy
integration-deps:
	@missing=""; for tool in $(INTEGRATION_TOOLS); do command -v $$tool >/dev/null || [ -x /usr/sbin/$$tool ] || [ -x /usr/bin/$$tool ] || missing="$$missing $$tool"; done; \
	if [ -n "$$missing" ]; then \
		echo "==> installing Debian's prometheus, prometheus-alertmanager, pgbouncer and tinyproxy for the integration tests (missing:$$missing)"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus prometheus-alertmanager pgbouncer tinyproxy; \
		for svc in pgbouncer tinyproxy; do (service $$svc stop || true) >/dev/null 2>&1; done; \
	fi

test: install lint browser-deps integration-deps
	$(BIN)/pytest

bench: install
	$(BIN)/python benchmarks/accuracy.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis test-artifacts
