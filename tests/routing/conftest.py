from __future__ import annotations

from collections.abc import Iterator

import pytest

from monitor.simulator.testing import SimulatorProcess
from tests.alerts.receiver import Receiver
from tests.routing.live_rig import LiveRig, start_rig, wait_until


@pytest.fixture(scope="package")  # stopped after tests/routing, not left probing beside the rest
def live_rig(tmp_path_factory) -> Iterator[LiveRig]:
    """`firsttoken run` on two simulator upstreams (see live_rig.py), warmed until both routes rank."""
    workdir = tmp_path_factory.mktemp("live")
    with SimulatorProcess() as a, SimulatorProcess() as b, Receiver() as hooks:
        rig, service = start_rig(workdir, (a, b), hooks)
        try:
            import httpx

            def ranked() -> bool:
                try:
                    routes = httpx.get(rig.base_url + "/routes?window=1m", timeout=5).json()["routes"]
                except (httpx.HTTPError, ValueError):
                    return False
                return len(routes) == 4 and all(r["samples"] >= 3 for r in routes)

            assert wait_until(ranked, 40), service.log()
            yield rig
        finally:
            service.stop()
