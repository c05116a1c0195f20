"""The alternative route of a route alert (DESIGN §14) read from the ranking, on SQLite and
PostgreSQL: a vantage alert's from its own vantage point (DESIGN §11)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monitor.alerts.alternatives import alternatives
from monitor.alerts.records import AlertRecord, Change
from monitor.alerts.scope import Scope
from monitor.sample import Sample
from monitor.storage.queries import insert_samples


def test_a_vantage_alerts_alternative_is_ranked_from_its_own_vantage_point(engine):
    """From agent b, groq is slow (its own path) and together is the better route; from every agent
    pooled, groq still ranks first. The target alert gets the pooled view, b's vantage alert b's."""
    now = datetime.now(UTC)
    model = "llama-3.1-70b-versatile"
    rows = []
    for i in range(20):
        for provider, agent, ttft in (("groq", "a", 100), ("groq", "b", 600), ("together", "a", 400),
                                      ("together", "b", 450), ("fireworks", "a", 700), ("fireworks", "b", 700)):  # fmt: skip
            rows.append(
                Sample(
                    target=f"{provider}/{model}@global:short",
                    provider=provider,
                    model=model,
                    region="global",
                    prompt="short",
                    started_at=now - timedelta(seconds=30 * i + 1),
                    ok=True,
                    ttft_ms=float(ttft),
                    total_ms=ttft + 100.0,
                    agent=agent,
                )
            )
    insert_samples(engine, rows)
    fireworks = Scope(provider="fireworks", region="global", model=model, prompt="short")

    def change(scope: Scope) -> Change:
        return Change(AlertRecord("slow", scope, "firing", "page", "ttft_ms", now), events=("firing",))

    found = alternatives(engine, [change(fireworks), change(fireworks.seen_from("b"))], now)
    assert found[fireworks.key]["provider"] == "groq"  # pooled: (100 + 600) / 2 beats together's 425
    assert found[fireworks.seen_from("b").key]["provider"] == "together"  # from b: 450 beats groq's 600
