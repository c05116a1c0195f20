"""Every provider fault at once, beside healthy targets, in a real `firsttoken run`.

The promise: a misbehaving provider costs the monitor nothing but the
probes against it. Healthy targets keep their schedule (sample counts and
`sched_lag_ms`), each failure is stored with its own `error_kind`, and memory,
file descriptors, sockets and asyncio tasks stay flat while faults repeat.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict

import pytest

from tests.faults.harness import (
    ServiceProcess,
    migrate_cli,
    percentile,
    sim_provider,
    stored_samples,
    wait_for,
    write_config,
)
from tests.faults.kinds import FAULT_KINDS

HEALTHY = [f"sim:ttft=30:itl=2:tokens=8:jitter=0:output_tokens={8 + i}" for i in range(6)]
# A 429 storm: many targets of one provider answering mostly 429, some 500/503.
STORM = [f"sim:ttft=5:tokens=4:fault=rate_limited:fault_p=0.9:errors=0.1:output_tokens={4 + i}" for i in range(12)]
RUN_S = 75  # long enough for every slow fault to repeat several times
WARM_SAMPLES = 3  # resources are measured from when every target has this many samples
INTERVAL_S = 1.0


def fault_model(fault: str) -> str:
    return f"sim:ttft=20:itl=2:tokens=8:fault={fault}"


@pytest.fixture
def service(tmp_path, simulator):
    db = f"sqlite:///{tmp_path / 'faults.db'}"
    config = write_config(
        tmp_path / "firsttoken.yaml",
        database=db,
        providers={
            "healthy": sim_provider(simulator, HEALTHY, region="calm", api_key="sk-healthy-provider-key"),
            "faulty": sim_provider(
                simulator, [fault_model(f) for f in FAULT_KINDS], region="storm", api_key="sk-faulty-provider-key"
            ),
            "storm": sim_provider(simulator, STORM, region="storm429", api_key="sk-storm-provider-key"),
            # No server at all: a closed port, and a host that does not resolve.
            "gone": {
                "protocol": "openai-chat",
                "api_key": "sk-gone-provider-key",
                "regions": {"refused": "http://127.0.0.1:9/v1", "nxdomain": "http://firsttoken-test.invalid/v1"},
                "models": ["m"],
            },
        },
        interval=f"{INTERVAL_S:g}s",
        # Room for every fault target at once: the caps are tested elsewhere, here
        # they would only turn slow faults into lag on the faulty provider.
        defaults={"max_concurrency": 128, "max_per_provider_region": 32},
    )
    migrate_cli(config)
    with ServiceProcess(config, tmp_path) as svc:
        yield svc, db


@pytest.mark.slow
def test_every_fault_at_once_leaves_healthy_targets_on_schedule(service):
    svc, db = service
    started = time.monotonic()
    n_targets = len(HEALTHY) + len(FAULT_KINDS) + len(STORM) + 2

    def every_fault_repeated() -> bool:  # lanes, caches and imports have settled by then
        counts = Counter(s["target"] for s in stored_samples(db))
        return len(counts) == n_targets and min(counts.values()) >= WARM_SAMPLES

    wait_for(every_fault_repeated, 40, f"{WARM_SAMPLES} samples of every target")
    warm = svc.resources()
    warm_health = svc.health()
    window_start = time.time()
    peak_rss = warm.rss_bytes
    while time.monotonic() - started < RUN_S:  # /healthz and /metrics answer all along
        assert svc.health() is not None, "healthz stopped answering"
        assert "firsttoken_probes_total" in svc.metrics()
        peak_rss = max(peak_rss, svc.resources().rss_bytes)
        time.sleep(1)
    window_s = time.time() - window_start
    end = svc.resources()
    end_health = svc.health()
    code = svc.stop()

    assert code == 0, svc.log()[-3000:]
    assert not svc.crash_lines(), "\n".join(svc.crash_lines()[:20])
    samples = stored_samples(db)

    # Each fault stored under its own error_kind, and nothing else.
    kinds: dict[str, Counter] = defaultdict(Counter)
    for s in samples:
        kinds[s["target"]][s["error_kind"] or "ok"] += 1
    for fault, kind in FAULT_KINDS.items():
        seen = kinds[f"faulty/{fault_model(fault)}@storm:short"]
        seen.pop("cancelled", None)  # a probe in flight at SIGTERM
        assert set(seen) == {kind}, (fault, seen)
    for region in ("refused", "nxdomain"):
        seen = kinds[f"gone/m@{region}:short"]
        seen.pop("cancelled", None)
        assert set(seen) == {"connect"} and seen["connect"] >= RUN_S / INTERVAL_S / 2, (region, seen)
    storm_kinds = Counter()
    for model in STORM:
        storm_kinds.update(kinds[f"storm/{model}@storm429:short"])
    assert storm_kinds["rate_limited"] > 0.7 * storm_kinds.total()
    assert set(storm_kinds) <= {"rate_limited", "server_error", "ok", "cancelled"}

    # Healthy targets: all ok, one sample per interval, started on time.
    for model in HEALTHY:
        target = f"healthy/{model}@calm:short"
        mine = [s for s in samples if s["target"] == target]
        assert all(s["ok"] for s in mine), Counter(s["error_kind"] for s in mine)
        in_window = [s for s in mine if s["started_at"].timestamp() >= window_start]
        expected = window_s / INTERVAL_S
        assert len(in_window) >= expected - 2, (target, len(in_window), expected)
    lags = [s["sched_lag_ms"] for s in samples if s["target"].startswith("healthy/")]
    assert percentile(lags, 50) < 50 and percentile(lags, 99) < 1000, (percentile(lags, 50), percentile(lags, 99))

    # Nothing leaks while faults repeat dozens of times: connections are bounded
    # by the lanes (one per probe in flight at the peak, reused after), every
    # other descriptor and the tasks beyond those in flight stay flat.
    lanes = end_health["http_lanes"]
    assert lanes <= n_targets, end_health
    assert end.tcp_sockets <= lanes + 1, (end, lanes)  # + the /metrics listener
    assert end.fds - end.tcp_sockets <= warm.fds - warm.tcp_sockets + 3, (warm, end)
    assert end_health["background_tasks"] <= warm_health["background_tasks"] + 3, (warm_health, end_health)
    assert end.rss_bytes < warm.rss_bytes + 40 * 2**20, (warm, end)
    assert peak_rss < 400 * 2**20, peak_rss  # the 10 MB lines are never held whole
