"""Two ISO weeks of probes in Europe/Berlin with known figures, for the weekly report's tests.

2026-W47 (the week before) and 2026-W48 (the report's week), plus two hours either side that belong to
neither. Providers `alpha` (two models) and `beta` (one), each probed every 10 minutes from two agents:

- alpha, W48: both agents fail Wednesday 10:00-13:00 Berlin (3 hours down on each model); agent-eu alone
  fails Thursday 14:00-16:00 (not down: the quorum of two agents needs both); TTFT ~600 ms (400 in W47).
- beta, W47: both agents fail Tuesday 08:00-10:00 (2 hours down). W48: both fail Saturday 02:00-04:00,
  inside the config's maintenance window over beta: neither up nor down. TPS 70 (50 in W47).
- every ok probe costs 0.002 USD (alpha) or 0.0005 USD (beta).

The samples are returned: the tests compute the truth from them on their own.
"""

from __future__ import annotations

import json
import math
import random
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from monitor.config import load_config_text
from monitor.sample import Sample
from monitor.storage.queries import insert_samples
from monitor.storage.rollups import hour_floor, rollup_hours

BERLIN = ZoneInfo("Europe/Berlin")
AGENTS = ("agent-eu", "agent-us")
W47_START = datetime(2026, 11, 15, 23, 0, tzinfo=UTC)  # Monday 16 Nov 00:00 CET
W48_START = datetime(2026, 11, 22, 23, 0, tzinfo=UTC)
W48_END = datetime(2026, 11, 29, 23, 0, tzinfo=UTC)
STEP = timedelta(minutes=10)
MAINTENANCE = (datetime(2026, 11, 28, 1, 0, tzinfo=UTC), datetime(2026, 11, 28, 3, 0, tzinfo=UTC))  # Sat 02-04 CET


def _berlin(*args) -> datetime:
    return datetime(*args, tzinfo=BERLIN).astimezone(UTC)


OUTAGES = {  # provider -> [(start, end, agents failing)]
    "alpha": [
        (_berlin(2026, 11, 25, 10), _berlin(2026, 11, 25, 13), AGENTS),
        (_berlin(2026, 11, 26, 14), _berlin(2026, 11, 26, 16), ("agent-eu",)),
    ],
    "beta": [(_berlin(2026, 11, 17, 8), _berlin(2026, 11, 17, 10), AGENTS), (*MAINTENANCE, AGENTS)],
}


def spec(**extra) -> dict:
    """The config as a dict (JSON is YAML): two providers, the maintenance window, an SLO; `extra` sections."""
    return {
        "providers": {
            "alpha": {"protocol": "openai-chat", "regions": {"r1": "http://127.0.0.1:9/v1"}, "models": ["m1", "m2"]},
            "beta": {"protocol": "openai-chat", "regions": {"r1": "http://127.0.0.1:9/v1"}, "models": ["m1"]},
        },
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
        "checks": [{"providers": ["alpha", "beta"], "prompts": ["short"]}],
        "maintenance": [
            {
                "name": "beta-saturday",
                "match": {"provider": "beta"},
                "start": MAINTENANCE[0].isoformat(),
                "end": MAINTENANCE[1].isoformat(),
            }
        ],
        "slos": [
            {
                "name": "alpha-fast",
                "match": {"provider": "alpha"},
                "objective": "99%",
                "period": "7d",
                "good": {"ttft_ms": {"below": "2s"}},
                "per": "provider",
            },
        ],
        **extra,
    }


def config(tmp_path, **extra):
    return load_config_text(json.dumps(spec(**extra)), base_dir=tmp_path, env={})


def _failing(provider: str, agent: str, at: datetime) -> bool:
    return any(start <= at < end and agent in agents for start, end, agents in OUTAGES[provider])


def samples(config) -> list[Sample]:
    rng = random.Random(48)
    out, at = [], W47_START - timedelta(hours=2)
    while at < W48_END + timedelta(hours=2):
        later = at >= W48_START
        for t in config.targets:
            for agent in AGENTS:
                started = at + timedelta(seconds=7)
                ok = not _failing(t.provider, agent, started)
                median = (600.0 if later else 400.0) if t.provider == "alpha" else 300.0
                tps = 80.0 if t.provider == "alpha" else (70.0 if later else 50.0)
                out.append(
                    Sample(
                        target=t.id, provider=t.provider, model=t.model, region=t.region, prompt=t.prompt,
                        started_at=started, ok=ok, error_kind=None if ok else "server_error", agent=agent,
                        ttft_ms=rng.lognormvariate(math.log(median), 0.3) if ok else None,
                        tps=rng.lognormvariate(math.log(tps), 0.1) if ok else None,
                        cost_usd=(0.002 if t.provider == "alpha" else 0.0005) if ok else None,
                    )
                )  # fmt: skip
        at += STEP
    return out


def plant(engine, config) -> list[Sample]:
    rows = samples(config)
    for i in range(0, len(rows), 20_000):
        insert_samples(engine, rows[i : i + 20_000])
    end = W48_END + timedelta(hours=2)
    rollup_hours(engine, hour_floor(rows[0].started_at), end, now=end + timedelta(hours=1))
    return rows
