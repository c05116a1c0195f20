"""Sample and config builders for the alert engine tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monitor.sample import Sample

T0 = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def sample(target: str, at: datetime, ttft_ms: float | None, *, ok: bool = True, agent: str = "a1", error_kind=None):
    provider, rest = target.split("/", 1)
    model, rest = rest.split("@", 1)
    region, prompt = rest.split(":", 1)
    return Sample(
        target=target,
        provider=provider,
        model=model,
        region=region,
        prompt=prompt,
        started_at=at,
        ok=ok,
        error_kind=None if ok else (error_kind or "server_error"),
        ttft_ms=ttft_ms if ok else None,
        ttft_answer_ms=ttft_ms if ok else None,
        total_ms=(ttft_ms or 0) + 100 if ok else None,
        tps=50.0 if ok else None,
        output_tokens=10 if ok else None,
        chunks=10 if ok else 0,
        http_status=200 if ok else 500,
        agent=agent,
    )


def series(target: str, start: datetime, values, *, step_s: float = 10.0, **kw) -> list[Sample]:
    return [sample(target, start + timedelta(seconds=i * step_s), v, **kw) for i, v in enumerate(values)]


def config_spec(
    *,
    models=("m0", "m1", "m2"),
    regions=("r1",),
    providers=("p",),
    rules=None,
    notifiers=None,
    silences=None,
    interval: str = "10s",
) -> dict:
    """Providers × models × regions on a dead local URL (nothing is probed), one prompt."""
    spec = {
        "database": "sqlite:///unused.db",
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}},
        "providers": {
            name: {
                "protocol": "openai-chat",
                "regions": {region: f"http://127.0.0.1:9/{name}/{region}/v1" for region in regions},
                "models": list(models),
            }
            for name in providers
        },
        "checks": [{"providers": list(providers), "prompts": ["short"], "interval": interval}],
        "alerts": rules
        if rules is not None
        else [
            {
                "name": "slow",
                "metric": "ttft_ms",
                "kind": "threshold",
                "percentile": 50,
                "above": 300,
                "window": "35s",
                "min_samples": 3,
                "for_evaluations": 2,
                "resolve_after": 2,
                "repeat_interval": "1h",
                "severity": "page",
            }
        ],
        "notifiers": notifiers if notifiers is not None else [{"name": "log", "type": "log"}],
    }
    if silences:
        spec["silences"] = silences
    return spec


def target_scope(model: str = "m1", provider: str = "p", region: str = "r1", prompt: str = "short", agent=None):
    """A target's scope (`p/m1@r1:short`), or as seen from one agent."""
    from monitor.alerts.scope import Scope

    return Scope(provider=provider, region=region, model=model, prompt=prompt, agent=agent)


def alert(rule: str = "slow", scope=None, state: str = "firing", **fields):
    """An alert record as a stage sees it: firing since T0 unless told otherwise, page, ttft_ms."""
    from monitor.alerts.records import AlertRecord

    values = {"severity": "page", "metric": "ttft_ms", "started_at": T0}
    if state != "pending":
        values["fired_at"] = T0
    return AlertRecord(rule=rule, scope=scope or target_scope(), state=state, **(values | fields))


def keyed(*records) -> dict:
    """Live alerts as a stage takes them: (rule, scope key) -> record."""
    return {(r.rule, r.scope.key): r for r in records}
