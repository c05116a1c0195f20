"""A small, known history for the dashboard tests: the values are kept so tests can
compute percentiles independently with numpy.

Four targets (two providers, one region, a short and a long prompt), three days at
5-minute intervals up to `now`, lognormal TTFT, ~5% failures, a few cancelled
probes; rollups built by the service's own `rollup_hours`; one resolved and one
firing alert, a silence and two notification deliveries (written straight into
the alert engine's tables: only the test writes, never the dashboard).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, text

from monitor.sample import Sample
from monitor.storage.models import Alert, NotificationOutbox, ProviderIncident, Silence
from monitor.storage.queries.samples import insert_samples
from monitor.storage.rollups import rollup_hours

TARGETS = (
    ("anthropic", "claude-3-5-haiku", "eu-west-1", "long", 900.0),
    ("anthropic", "claude-3-5-haiku", "eu-west-1", "short", 350.0),
    ("openai", "gpt-4o-mini", "eu-west-1", "long", 700.0),
    ("openai", "gpt-4o-mini", "eu-west-1", "short", 250.0),
)
DAYS = 3
STEP = timedelta(minutes=5)


@dataclass(frozen=True)
class Seeded:
    now: datetime
    samples: tuple[Sample, ...]

    def of(self, target: str) -> list[Sample]:
        return [s for s in self.samples if s.target == target]


def make_samples(now: datetime, seed: int = 11) -> list[Sample]:
    rng = random.Random(seed)
    start = now - timedelta(days=DAYS)
    out = []
    for provider, model, region, prompt, median in TARGETS:
        target = f"{provider}/{model}@{region}:{prompt}"
        t = start
        while t < now:
            roll = rng.random()
            ok = roll > 0.05
            cancelled = not ok and rng.random() < 0.15
            kind = (
                None if ok else ("cancelled" if cancelled else rng.choice(["timeout", "server_error", "rate_limited"]))
            )
            ttft = rng.lognormvariate(0, 0.45) * median
            tps = rng.lognormvariate(0, 0.15) * (140 if "mini" in model else 90)
            out.append(
                Sample(
                    target=target,
                    provider=provider,
                    model=model,
                    region=region,
                    prompt=prompt,
                    started_at=t + timedelta(seconds=rng.uniform(0, 20)),
                    ok=ok,
                    error_kind=kind,
                    ttft_ms=ttft if ok else None,
                    ttft_answer_ms=ttft if ok else None,
                    total_ms=ttft + 60_000 / tps if ok else None,
                    output_tokens=64 if ok else None,
                    tokens_source="usage" if ok else None,
                    input_tokens=4000 if prompt == "long" else 17,
                    # openai is priced (gpt-4o-mini: $0.15 in, $0.60 out per Mtok), anthropic is not
                    cost_usd=((4000 if prompt == "long" else 17) * 0.15 + 64 * 0.60) / 1e6
                    if ok and provider == "openai"
                    else None,
                    tps=tps if ok else None,
                    chunks=64 if ok else 0,
                    http_status=200 if ok else 500,
                    agent="test-agent",
                )
            )
            t += STEP
    return out


def seed(engine: Engine, now: datetime | None = None) -> Seeded:
    now = (now or datetime.now(UTC)).replace(second=0, microsecond=0)
    samples = make_samples(now)
    insert_samples(engine, samples)
    rollup_hours(engine, now - timedelta(days=DAYS, hours=1), now + timedelta(hours=1), now=now)
    provider, model, region, prompt, _ = TARGETS[0]
    scope = dict(scope_kind="target", scope_key=f"{provider}/{model}@{region}:{prompt}", provider=provider,
                 model=model, region=region, prompt=prompt, severity="page", summary="seeded")  # fmt: skip
    with engine.begin() as conn:
        conn.execute(text("UPDATE agents SET last_seen = :now"), {"now": now})
        conn.execute(
            Alert.__table__.insert(),
            [
                dict(scope, state="resolved", rule="ttft-regression", metric="ttft_ms", value=818.9545, baseline=867.0,
                     fired_value=1812.4, worst_value=2456.0,
                     started_at=now - timedelta(days=2), fired_at=now - timedelta(days=2),
                     resolved_at=now - timedelta(days=2, hours=-3)),
                dict(scope, state="firing", rule="errors", metric="error_rate", value=0.4, baseline=0.05,
                     fired_value=0.0417, worst_value=0.5,
                     started_at=now - timedelta(minutes=40), fired_at=now - timedelta(minutes=35), resolved_at=None),
            ],
        )  # fmt: skip
        # The provider's own status page posted an incident 12 minutes after our alert fired.
        conn.execute(
            ProviderIncident.__table__.insert(),
            [dict(provider=provider, source_id="off-1", name="Elevated error rates", status="investigating",
                  impact="major", started_at=now - timedelta(minutes=23), updated_at=now - timedelta(minutes=23),
                  fetched_at=now)],
        )  # fmt: skip
        alert_id = conn.execute(text("SELECT min(id) FROM alerts")).scalar()
        conn.execute(
            Silence.__table__.insert(),
            dict(match={"provider": "openai"}, starts_at=now - timedelta(hours=1), ends_at=now + timedelta(days=1),
                 reason="maintenance", created_by="test", created_at=now - timedelta(hours=1)),
        )  # fmt: skip
        conn.execute(
            NotificationOutbox.__table__.insert(),
            [
                dict(alert_id=alert_id, event="firing", event_seq=0, notifier=f"hook-{status}", payload={},
                     status=status, attempts=1, next_attempt_at=now, last_error=error, created_at=now,
                     sent_at=now if status == "sent" else None)
                for status, error in (("sent", None), ("failed", "HTTP 500 from receiver"))
            ],
        )  # fmt: skip
    return Seeded(now, tuple(samples))
