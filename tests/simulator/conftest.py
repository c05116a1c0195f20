"""Fixtures for the simulator's own tests: one simulator process for the session."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from monitor.simulator.testing import SimulatorProcess


@pytest.fixture(scope="session")
def sim() -> Iterator[SimulatorProcess]:
    """A simulator in a subprocess (its own GIL: timing is not disturbed by the tests)."""
    with SimulatorProcess(seed=1) as process:
        yield process


@pytest.fixture(scope="session")
def client(sim: SimulatorProcess) -> Iterator[httpx.Client]:
    """One kept-alive client for the session (creating one costs an SSL context)."""
    with httpx.Client(base_url=sim.base_url, timeout=10) as c:
        yield c


@pytest.fixture
def model_name() -> str:
    """A model name no other test uses, for runtime upserts."""
    return f"test-model-{uuid.uuid4().hex[:8]}"
