"""An alert's chart (DESIGN §18), from the database: what `/alerts/<id>/chart.png` serves and mail inlines.

    charts = AlertCharts(engine, lambda: config)
    charts.for_alert(42)        # PNG bytes, or None for an alert that does not exist
    charts.for_body(body)       # the same chart from a notification body (the email notifier)

The chart is the metric's last CHART_SPAN for the alerted scope (its targets in the config, as the
rule or SLO selects them), one line per vantage point, the baseline band, the change marked; drawn
by monitor.alerts.chart. An SLO alert's metric is the one its `good:` bounds (else the error rate),
with the bound as its reference line; a `change` rule's (a label) shows TTFT around the change. A
resolved alert's window ends a little after it resolved. Alert 0 is the sample alert of `firsttoken
notify test` (monitor.alerts.sample): its own targets' samples when the database has some, else a
synthetic six hours.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import Engine, select

from monitor.alerts.chart import ChartSpec, Line, render_png
from monitor.alerts.message import message_of, scope_text
from monitor.alerts.payload import build_body, from_iso
from monitor.alerts.records import RESOLVED_EVENT
from monitor.alerts.store import ALERTS, record_from_row
from monitor.palette import series_colors
from monitor.storage.queries.alertchart import CHART_METRICS, AgentBuckets, per_agent

log = logging.getLogger(__name__)

CHART_SPAN = timedelta(hours=6)
BUCKET_S = 300.0  # 72 points a line: the shape of a regression, not every probe
AFTER_RESOLVED = timedelta(minutes=30)
BAND = (10.0, 90.0)  # percentiles of the bucket medians before the change
MIN_BAND_POINTS = 3
FALLBACK_METRIC = "ttft_ms"


@dataclass(frozen=True, slots=True)
class Plot:
    """What to draw for one alert, before any sample is read."""

    metric: str
    reference: str  # what the dashed line is: baseline, threshold, SLO bound
    level: float | None
    target_ids: tuple[str, ...]
    start: datetime
    end: datetime


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _in_scope(target, scope: Mapping[str, Any]) -> bool:
    model = scope.get("model")
    if model is not None and model not in (target.model, getattr(target, "canonical_model", None)):
        return False
    return all(scope.get(k) in (None, getattr(target, k)) for k in ("provider", "region", "prompt"))


def plot_of(body: Mapping[str, Any], config, now: datetime) -> Plot:
    """The metric, reference line, targets and window of a body's chart (pure)."""
    scope = body.get("scope") or {}
    slo_name, rule_name = body.get("slo"), body.get("rule")
    selector = next((s for s in config.slos if s.name == slo_name), None) if slo_name else None
    rule = next((r for r in config.alerts if r.name == rule_name), None) if not slo_name else None
    metric, level = str(body.get("metric") or ""), _number(body.get("baseline"))
    reference = "threshold" if getattr(rule, "kind", None) == "threshold" else "baseline"
    if selector is not None:
        reference, bounds = "SLO bound", selector.good
        metric, level = "error_rate", None
        for name in ("ttft_ms", "ttft_answer_ms", "total_ms", "tps"):
            bound = getattr(bounds, name, None)
            if bound is not None:
                metric, level = name, bound.below if bound.below is not None else bound.above
                break
    elif metric not in CHART_METRICS:  # a change rule's label, a cache hit ratio: TTFT around it
        metric, level = FALLBACK_METRIC, None
    selected = selector or rule
    targets = [t for t in config.targets if _in_scope(t, scope)]
    if selected is not None:
        targets = [t for t in targets if selected.matches(t.provider, t.model, t.region, t.prompt)]
    ids = tuple(t.id for t in targets)
    if not ids and scope.get("model") and scope.get("prompt"):  # a target since removed from the config
        ids = (f"{scope['provider']}/{scope['model']}@{scope['region']}:{scope['prompt']}",)
    resolved_at = from_iso(body.get("resolved_at"))
    end = min(now, resolved_at + AFTER_RESOLVED) if resolved_at else now
    return Plot(metric, reference, level, ids, end - CHART_SPAN, end)


def band_of(series: Sequence[AgentBuckets], before: datetime | None) -> tuple[float, float] | None:
    """p10–p90 of the bucket medians before the change, every vantage point pooled (pure)."""
    if before is None:
        return None
    cut = before.timestamp()
    pooled = np.concatenate([s.values[s.t_s < cut] for s in series]) if series else np.zeros(0)
    pooled = pooled[~np.isnan(pooled)]
    if pooled.size < MIN_BAND_POINTS:
        return None
    lo, hi = np.percentile(pooled, BAND)
    return float(lo), float(hi)


def spec_of(body: Mapping[str, Any], plot: Plot, series: Sequence[AgentBuckets]) -> ChartSpec:
    """The drawing of a body's chart from its plot and its vantage points' buckets (pure)."""
    message = message_of(body)
    provider = (body.get("scope") or {}).get("provider")
    colors = series_colors([(s.agent, provider) for s in series], [provider] if provider else [])
    changed_at = from_iso(body.get("started_at"))
    return ChartSpec(
        title=f"{plot.metric} of {scope_text(body)}, last {CHART_SPAN.total_seconds() / 3600:.0f} h",
        metric=plot.metric,
        start=plot.start,
        end=plot.end,
        lines=tuple(Line(s.agent, s.t_s.tolist(), s.values.tolist(), colors[s.agent]) for s in series),
        changed_at=changed_at,
        resolved_at=from_iso(body.get("resolved_at")),
        baseline=plot.level,
        reference=plot.reference,
        band=band_of(series, changed_at),
        accent=message.color,
    )


class AlertCharts:
    """Charts from `engine` (a read replica will do; None: no database, `notify test` without one);
    `config` returns the running config."""

    def __init__(
        self, engine: Engine | None, config: Callable[[], Any], clock: Callable[[], datetime] | None = None
    ) -> None:
        self._engine = engine
        self._config = config
        self._clock = clock or (lambda: datetime.now(UTC))

    def body_of(self, alert_id: int) -> dict[str, Any] | None:
        """The alert's notification body as it stands (no links), or None when there is no such alert."""
        from monitor.alerts.sample import SAMPLE_ALERT_ID, sample_body

        if alert_id == SAMPLE_ALERT_ID:
            return sample_body(self._config(), self._clock())
        if self._engine is None:
            return None
        with self._engine.connect() as conn:
            row = conn.execute(select(ALERTS).where(ALERTS.c.id == alert_id)).first()
        if row is None:
            return None
        record = record_from_row(row)
        return build_body(record, RESOLVED_EVENT if record.resolved_at else "firing", alert_id, None)

    def for_alert(self, alert_id: int) -> bytes | None:
        body = self.body_of(alert_id)
        return None if body is None else self.for_body(body)

    def for_body(self, body: Mapping[str, Any]) -> bytes:
        from monitor.alerts.sample import SAMPLE_ALERT_ID, synthetic_series

        plot = plot_of(body, self._config(), self._clock())
        series = []
        if self._engine is not None:
            series = per_agent(self._engine, plot.target_ids, plot.metric, plot.start, plot.end, bucket_s=BUCKET_S)
        if not series and body.get("alert_id") == SAMPLE_ALERT_ID:
            series = synthetic_series(body, plot, BUCKET_S)
        return render_png(spec_of(body, plot, series))

    def png_or_none(self, body: Mapping[str, Any]) -> bytes | None:
        """The chart, or None when it cannot be drawn now (the database is away): a page goes out
        without its chart rather than not at all."""
        try:
            return self.for_body(body)
        except Exception as exc:
            log.warning("alert chart for #%s unavailable: %s", body.get("alert_id"), type(exc).__name__)
            return None
