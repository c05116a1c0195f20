"""Fixtures shared across the suite: a real simulator process and config-built targets."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from monitor.config import load_config_text
from monitor.simulator.testing import SimulatorProcess
from monitor.simulator.wire import BY_PROTOCOL

# Base URL path per protocol, relative to the simulator's root (what a user would put
# under `regions:` for the real provider); each simulator encoder declares its own.
BASE_PATH = {protocol: cls.base_path for protocol, cls in BY_PROTOCOL.items()}


@pytest.fixture(scope="session")
def simulator() -> Iterator[SimulatorProcess]:
    """One simulator subprocess for the session: timed tests need their own process."""
    with SimulatorProcess() as sim:
        yield sim


@pytest.fixture
def make_target(simulator: SimulatorProcess, tmp_path) -> Callable:
    """Build a real config Target pointing at the simulator."""

    def build(
        model: str,
        protocol: str = "openai-chat",
        *,
        api_key: str | None = "sk-test-key",
        ttft_timeout: str = "5s",
        timeout: str = "10s",
        max_tokens: int = 64,
        cache_bust: bool = True,
        options: dict | None = None,
        content: str = "Explain TTFT in one sentence.",
    ):
        provider = {
            "protocol": protocol,
            "regions": {"local": simulator.base_url + BASE_PATH[protocol]},
            "models": [model],
            "cache_bust": cache_bust,
        }
        if api_key is not None:
            provider["api_key"] = api_key
        if options:
            provider["options"] = options
        config = {
            "providers": {"sim": provider},
            "prompts": {"p": {"messages": [{"role": "user", "content": content}], "max_tokens": max_tokens}},
            "checks": [{"providers": ["sim"], "prompts": ["p"], "ttft_timeout": ttft_timeout, "timeout": timeout}],
        }
        # JSON is YAML; the loader sees exactly what a user's file would hold.
        (target,) = load_config_text(json.dumps(config), base_dir=tmp_path, env={}).targets
        return target

    return build


@pytest.fixture(scope="session")
def pg_server():
    """Creates throwaway PostgreSQL databases; see tests/pg.py."""
    from tests.pg import pg_server_fixture

    yield from pg_server_fixture()


# `make test` runs the suite on pytest-xdist workers with `--dist loadgroup`. A fixture that outlives
# one test is built once per worker that uses it, so the tests sharing an expensive one stay on one
# worker: by the fixture's name for these session-wide servers, by module for module-scoped fixtures.
SHARED_SERVERS = {
    "live_rig": "live-rig",  # tests/routing: `firsttoken run` on two simulators, warmed until routes rank
    "running": "integration-run",  # tests/integrations: `firsttoken run` exporting OTLP ...
    "prometheus": "integration-run",  # ... scraped by a real Prometheus
    "pgbouncer": "pgbouncer",  # tests/production: Debian's PgBouncer
}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.get_closest_marker("xdist_group") is not None or not hasattr(item, "_fixtureinfo"):
            continue
        group = next((SHARED_SERVERS[name] for name in item.fixturenames if name in SHARED_SERVERS), None)
        if group is None:
            defs = item._fixtureinfo.name2fixturedefs
            if any(
                defs[name][-1].scope in ("module", "package", "class") for name in item.fixturenames if name in defs
            ):
                group = item.nodeid.split("::", 1)[0]
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
