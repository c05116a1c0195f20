"""Read a period's probes and windows, judge every contract (DESIGN §17): the report's thin I/O edge.

    report = build_sla_report(engine, config, period, providers=["bedrock"])

The judging is `minutes.judge`, the figures `report.assess`; this module only reads the samples of
the providers with a contract, our maintenance windows over the period, and hands them over.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from monitor.maintenance.store import windows_between
from monitor.maintenance.windows import Coverage
from monitor.reports.sla.minutes import MAX_HOLD_MIN, Probe, Terms, judge
from monitor.reports.sla.report import ContractResult, Period, SlaReport, assess
from monitor.storage.queries.sla import provider_probes

LOOKBACK = timedelta(minutes=MAX_HOLD_MIN)  # a probe before the period may still speak for its first minutes


def build_sla_report(engine, config, period: Period, providers: Sequence[str] | None = None) -> SlaReport:
    asked = list(providers) if providers else sorted(config.providers)
    unknown = [p for p in asked if p not in config.providers]
    if unknown:
        raise ValueError(f"no provider named {unknown[0]!r} in the config")
    with_contract = [p for p in asked if config.providers[p].contracts]
    with engine.connect() as conn:
        windows = windows_between(conn, config.maintenance, period.start - LOOKBACK, period.end)
    results: list[ContractResult] = []
    for provider in with_contract:  # one provider's month in memory at a time
        mine = list(provider_probes(engine, [provider], period.start - LOOKBACK, period.end))
        for contract in config.providers[provider].contracts:
            results.append(_one(contract, provider, mine, windows, config, period))
    return SlaReport(
        period=period,
        generated_at=datetime.now(UTC),
        contracts=tuple(results),
        without_contract=tuple(p for p in asked if p not in with_contract),
    )


def _one(contract, provider: str, rows: list[tuple], windows, config, period: Period) -> ContractResult:
    metric = contract.latency.minute_ok.metric if contract.latency else None
    probes, targets = [], {}
    for at, _provider, model, region, prompt, target, agent, ok, kind, tps, ttft_ms, request_id in rows:
        if not contract.covers(model, region):
            continue
        targets[target] = SimpleNamespace(target=target, provider=provider, model=model, region=region, prompt=prompt)
        value = {"tps": tps, "ttft_ms": ttft_ms}.get(metric) if ok and metric else None
        probes.append(Probe(at.timestamp(), agent, target, bool(ok), kind, value, request_id))
    for t in config.targets:  # configured targets never probed still belong to the contract
        if t.provider == provider and contract.covers(t.model, t.region):
            targets.setdefault(
                t.id, SimpleNamespace(target=t.id, provider=provider, model=t.model, region=t.region, prompt=t.prompt)
            )
    coverage = Coverage.of(windows, targets.values(), key="target")
    spans = {t: [(b.timestamp(), e.timestamp()) for b, e in coverage.spans(t)] for t in coverage.targets()}
    terms = Terms(
        error_rate=contract.uptime.minute_down.error_rate if contract.uptime else None,
        kinds=frozenset(contract.uptime.minute_down.kinds) if contract.uptime else frozenset(),
        latency_ok=contract.latency.minute_ok if contract.latency else None,
    )
    verdicts = judge(probes, period.start.timestamp(), period.minutes, terms, spans, targets)
    return assess(contract, provider, verdicts, period)
