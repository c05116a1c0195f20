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


# `make test` runs the suite on pytest-xdist workers (`-n 2 --dist loadgroup`). A fixture that outlives
# one test is built once per worker that uses it, so a module's tests stay on one worker, and so do the
# packages whose session-wide servers several modules share. (The scheduler below replaces xdist's own
# loadgroup, whose `xdist_group` marks pytest 9 no longer lets it apply.)
SHARED_PACKAGES = (
    "tests/integrations/",  # `firsttoken run` exporting OTLP, scraped by a real Prometheus
    "tests/routing/",  # the live rig: `firsttoken run` on two simulators, warmed until routes rank
    "tests/production/",  # Debian's PgBouncer
)


def xdist_group(nodeid: str) -> str:
    """The unit of work a worker takes whole: a shared package, else the test's module."""
    module = nodeid.split("::", 1)[0]
    return next((package for package in SHARED_PACKAGES if module.startswith(package)), module)


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False  # hand groups out in collection order: slow ones first (below)

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

    return GroupScheduling(config, log)


def pytest_collection_modifyitems(config, items) -> None:
    """On an xdist worker, the groups holding a `slow` test go first, so that no long test starts
    last while the other worker idles (the scheduler hands groups out in this order)."""
    if not hasattr(config, "workerinput"):
        return
    slow = {xdist_group(item.nodeid) for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: xdist_group(item.nodeid) not in slow)
