"""The sample alert of `firsttoken notify test` (DESIGN §18): a realistic page, built as a real one is.

A TTFT regression on the config's first target (a made-up one when it has none), firing for 40
minutes, seen from two vantage points with a third normal, mostly the provider's doing; the rule is
the config's first latency regression rule (its `runbook:` included). Its record goes through the
same render and body (monitor.alerts.render, payload) as any alert's, so every field a notifier
shows is there. Its id is SAMPLE_ALERT_ID (0, which no stored alert has): its chart link and its
silence link are signed like any other, the chart is drawn from its target's samples when the
database has some and from `synthetic_series` otherwise, and its silence page silences nothing.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from monitor.alerts.payload import build_body, from_iso, with_alternative
from monitor.alerts.records import FIRING, AlertRecord, Facts
from monitor.alerts.render import render
from monitor.alerts.scope import Scope
from monitor.alerts.signing import AlertLinks
from monitor.storage.queries.alertchart import AgentBuckets

SAMPLE_ALERT_ID = 0
RULE = "ttft-regression"
BASELINE_MS, NOW_MS = 412.0, 968.0
AGENTS, CLEAR = ("us-east", "eu-west"), ("ap-south",)
STARTED_AGO = timedelta(minutes=40)
ATTRIBUTION = {"network_ms": 14.0, "provider_ms": 542.0, "dominant": "provider"}
SEED = 18  # the synthetic chart is the same picture every time


def _rule(config):
    latency = [r for r in config.alerts if r.kind == "regression" and r.metric == "ttft_ms"]
    return (latency or [None])[0]


def sample_record(config, now: datetime) -> AlertRecord:
    target = config.targets[0] if config.targets else None
    scope = (
        Scope.of_target(target)
        if target is not None
        else Scope(provider="openai", region="us-east", model="gpt-4o-mini", prompt="short")
    )
    rule = _rule(config)
    now = now.replace(microsecond=0)
    started = now - STARTED_AGO
    record = AlertRecord(
        rule=rule.name if rule is not None else RULE,
        scope=scope,
        state=FIRING,
        severity=rule.severity if rule is not None else "page",
        metric="ttft_ms",
        started_at=started,
        fired_at=started + timedelta(minutes=2),
        value=NOW_MS,
        baseline=BASELINE_MS,
        fired_value=901.0,
        worst_value=1012.0,
        last_evaluated_at=now,
        agents=AGENTS,
        agents_clear=CLEAR,
        attribution=dict(ATTRIBUTION),
        facts=Facts(say_agents=True),
    )
    return replace(record, summary=render(record))


def sample_body(
    config,
    now: datetime,
    *,
    links: AlertLinks | None = None,
    alternative: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The sample alert's notification body, its links signed as of `now` when `links` is given."""
    record = sample_record(config, now)
    rule = _rule(config)
    runbook = str(rule.runbook) if rule is not None and rule.runbook else None
    body = build_body(record, "firing", SAMPLE_ALERT_ID, config.dashboard_url, runbook=runbook, links=links, now=now)
    return with_alternative(body, alternative)


def synthetic_series(body: dict[str, Any], plot, bucket_s: float) -> list[AgentBuckets]:
    """Six plausible hours for the sample's chart: a noisy daily drift, then the regression on the
    agents that see it (pure; `plot` gives the window)."""
    rng = random.Random(SEED)
    start, end = plot.start.timestamp(), plot.end.timestamp()
    n = max(1, math.ceil((end - start) / bucket_s))
    mids = start + (np.arange(n) + 0.5) * bucket_s
    began = from_iso(body["started_at"]).timestamp()
    out = []
    for i, agent in enumerate((*body.get("agents", ()), *body.get("agents_clear", ()))):
        seen = agent in body.get("agents", ())
        base = BASELINE_MS * (1 + 0.06 * (i - 1))
        values = []
        for t in mids:
            level = base * (1 + 0.05 * math.sin((t - start) / 5400))
            if seen and t >= began:
                level *= min(NOW_MS / BASELINE_MS, 1 + (t - began) / 300)
            values.append(level * rng.lognormvariate(0, 0.045))
        out.append(AgentBuckets(agent, mids, np.array(values)))
    return out
