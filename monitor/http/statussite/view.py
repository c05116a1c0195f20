"""What the status site shows, built from values (pure): components, daily bars, uptime, trends.

Components are provider -> model: a model's figures are its shown targets' (its regions and
prompts) summed, a provider's its models'. Per day:

- availability: 1 - down hours / probed hours, both by the quorum (`monitor.availability`): at
  least 99.9 % no downtime, then minor (>= 99 %), partial (>= 95 %), major outage;
- latency: the day's median TTFT as the quorum saw it, against the target's baseline (the median of
  its daily medians over the history) or the TTFT bound of an SLO covering it: slow at SLOW_RATIO
  times the baseline or above the bound. Slow is not down: a day with no downtime that was slow
  has its own colour and words; a day with downtime says both.
- no data: no agent probed it that day.

Uptime over each window is down time over probed time; the current state is the snapshot's (the
last 15 minutes and the quorum's alerts, `monitor.http.public`). Incidents are our published ones
(monitor.incidents: drafted from the pages the quorum confirmed; with `publish: manual`, shown once
published), with their published updates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import numpy as np

from monitor import fmt
from monitor.http import statuspage as sp

OK, SLOW, MINOR, PARTIAL, MAJOR, NONE = "ok", "slow", "minor", "partial", "major", "none"
LEVEL_TEXT = {
    OK: "no downtime",
    SLOW: "slow, not down",
    MINOR: "minor outage",
    PARTIAL: "partial outage",
    MAJOR: "major outage",
    NONE: "no data",
}
LEGEND = (OK, SLOW, MINOR, PARTIAL, MAJOR, NONE)
MINOR_BELOW, PARTIAL_BELOW, MAJOR_BELOW = 0.999, 0.99, 0.95
SLOW_RATIO = 1.5
SPARK_W, SPARK_H = 240, 40


@dataclass(frozen=True)
class Shown:
    """A target on the site: which component it belongs to, and the TTFT bound of an SLO over it."""

    id: str
    provider: str
    model: str
    ttft_bound_ms: float | None = None
    slo: str | None = None


@dataclass(frozen=True)
class History:
    """The daily figures of `statushistory.Daily`, rows in `targets` order (as values, no numpy API)."""

    targets: tuple[str, ...]
    days: tuple[date, ...]
    probed_h: np.ndarray
    down_h: np.ndarray
    ttft_p50_ms: np.ndarray
    windows: Mapping[str, tuple[np.ndarray, np.ndarray]]  # name -> (probed h, down h) per target
    window_hours: Mapping[str, float]  # name -> its length
    maintenance_h: np.ndarray | None = None


@dataclass(frozen=True)
class Bar:
    day: date
    level: str
    text: str  # what the day was, in words: the bar's accessible name and its tooltip


@dataclass(frozen=True)
class Uptime:
    window: str
    text: str  # 99.95%, or an em dash with no probe
    detail: str


@dataclass(frozen=True)
class Spark:
    points: str  # an SVG polyline's points
    label: str
    width: int = SPARK_W
    height: int = SPARK_H


@dataclass(frozen=True)
class Component:
    name: str
    full_name: str
    state: str
    state_text: str
    p50_text: str
    bars: tuple[Bar, ...]
    bars_label: str
    uptime: tuple[Uptime, ...]
    spark: Spark | None


@dataclass(frozen=True)
class UpdateLine:
    state: str  # Investigating, Identified, Monitoring, Resolved
    when: str
    when_iso: str
    message: str


@dataclass(frozen=True)
class IncidentView:
    """One of our published incidents (monitor.incidents), with its published updates, newest first."""

    id: int
    title: str
    ongoing: bool
    impact: str  # its components' worst state now (operational once resolved): its colour
    began: str
    began_iso: str
    ended: str
    duration: str
    provider: str | None
    components: str = ""
    updates: tuple[UpdateLine, ...] = ()


@dataclass(frozen=True)
class MaintenanceView:
    title: str
    active: bool
    when: str
    starts_iso: str
    ends_iso: str
    components: str
    providers: tuple[str, ...]


@dataclass(frozen=True)
class Provider:
    name: str
    summary: Component
    models: tuple[Component, ...]
    incidents: tuple[IncidentView, ...]
    maintenance: tuple[MaintenanceView, ...]


@dataclass(frozen=True)
class Site:
    title: str
    url: str | None
    generated: str
    generated_iso: str
    indicator: str
    description: str
    state: str
    providers: tuple[Provider, ...]
    live: tuple[IncidentView, ...]
    past: tuple[IncidentView, ...]
    maintenance: tuple[MaintenanceView, ...]
    history_days: int
    windows: tuple[str, ...]
    legend: tuple[tuple[str, str], ...]
    slow_ratio: float = SLOW_RATIO
    subscribe: bool = False  # mail is configured: the page offers the subscription form
    live_minutes: int = 15  # the current status's window (monitor.http.public.WINDOW)

    def provider(self, name: str) -> Provider | None:
        return next((p for p in self.providers if p.name == name), None)


def uptime_text(availability: float | None) -> str:
    """`99.95%`, truncated (never 100.00% with any downtime); an em dash without data."""
    if availability is None or math.isnan(availability):
        return fmt.DASH
    if availability >= 1.0:
        return "100%"
    return f"{math.floor(availability * 10_000) / 100:.2f}%"


def _hours_text(hours: float) -> str:
    return fmt.span(hours * 3600)


def day_level(probed_h: float, down_h: float, slow: bool) -> str:
    if probed_h <= 0:
        return NONE
    availability = 1 - down_h / probed_h
    if availability < MAJOR_BELOW:
        return MAJOR
    if availability < PARTIAL_BELOW:
        return PARTIAL
    if availability < MINOR_BELOW:
        return MINOR
    return SLOW if slow else OK


def baselines(p50: np.ndarray) -> np.ndarray:
    """Per target: the median of its daily medians over the history (NaN without any)."""
    out = np.full(p50.shape[0], np.nan)
    for i, row in enumerate(p50):
        if not np.isnan(row).all():
            out[i] = float(np.nanmedian(row))
    return out


@dataclass(frozen=True)
class _Slowness:
    slow: bool
    text: str


def _slowness(rows: Sequence[int], day: int, history: History, shown: Sequence[Shown], base: np.ndarray) -> _Slowness:
    """Was the component slow that day (any of its targets), and how, in words."""
    worst: tuple[float, str] | None = None
    medians = []
    for i in rows:
        p50 = float(history.ttft_p50_ms[i, day])
        if math.isnan(p50):
            continue
        medians.append(p50)
        reasons = []
        if not math.isnan(base[i]) and base[i] > 0 and p50 >= SLOW_RATIO * base[i]:
            reasons.append((p50 / base[i], f"{p50 / base[i]:.1f}× its usual {fmt.ms(base[i])}"))
        bound = shown[i].ttft_bound_ms
        if bound is not None and p50 >= bound:
            reasons.append((p50 / bound * SLOW_RATIO, f"over the {fmt.ms(bound)} bound of SLO {shown[i].slo}"))
        for weight, words in reasons:
            if worst is None or weight > worst[0]:
                worst = (weight, f"median TTFT {fmt.ms(p50)}, {words}")
    if worst is not None:
        return _Slowness(True, f"Slow: {worst[1]}.")
    if medians:
        return _Slowness(False, f"Median TTFT {fmt.ms(sp.median_of(medians))}.")
    return _Slowness(False, "")


def _bars(rows: Sequence[int], history: History, shown: Sequence[Shown], base: np.ndarray) -> tuple[Bar, ...]:
    bars = []
    for d, day in enumerate(history.days):
        probed = float(history.probed_h[rows, d].sum()) if rows else 0.0
        down = float(history.down_h[rows, d].sum()) if rows else 0.0
        slowness = _slowness(rows, d, history, shown, base)
        level = day_level(probed, down, slowness.slow)
        words = [f"{day:%a %d %b %Y}: {LEVEL_TEXT[level]}."]
        if probed > 0:
            avail = 1 - down / probed
            downtime = f"{_hours_text(down)} down" if down > 0 else "no downtime"
            words.append(f"{uptime_text(avail)} available ({downtime} of {_hours_text(probed)} probed).")
        if slowness.text and level != NONE:
            words.append(slowness.text)
        if history.maintenance_h is not None and rows:
            planned = float(history.maintenance_h[rows, d].max())
            if planned > 0:
                words.append(f"Planned maintenance: {_hours_text(planned)}, not counted.")
        bars.append(Bar(day, level, " ".join(words)))
    return tuple(bars)


def _bars_label(bars: Sequence[Bar], days: int) -> str:
    counts = {level: sum(1 for b in bars if b.level == level) for level in LEGEND}
    parts = [f"{n} {LEVEL_TEXT[level]}" for level, n in counts.items() if n]
    return f"Last {days} days, one bar a day: " + ", ".join(parts) + "."


def _uptime(rows: Sequence[int], history: History) -> tuple[Uptime, ...]:
    out = []
    for name, (probed_h, down_h) in history.windows.items():
        probed = float(probed_h[rows].sum()) if rows else 0.0
        down = float(down_h[rows].sum()) if rows else 0.0
        if probed <= 0:
            out.append(Uptime(name, fmt.DASH, "no probe in this window"))
            continue
        span = history.window_hours[name] * max(1, len(rows))
        coverage = "" if probed >= 0.9 * span else f"; probed {_hours_text(probed / max(1, len(rows)))} of it"
        out.append(Uptime(name, uptime_text(1 - down / probed), f"{_hours_text(down)} down{coverage}"))
    return tuple(out)


def _spark(rows: Sequence[int], history: History, name: str) -> Spark | None:
    """The component's daily median TTFT (the median of its targets' quorum medians) as a polyline."""
    values = []
    for d in range(len(history.days)):
        day = [float(history.ttft_p50_ms[i, d]) for i in rows if not math.isnan(history.ttft_p50_ms[i, d])]
        values.append(sp.median_of(day) if day else math.nan)
    known = [v for v in values if not math.isnan(v)]
    if len(known) < 2:
        return None
    low, high = min(known), max(known)
    spread = (high - low) or 1.0
    step = SPARK_W / max(1, len(values) - 1)
    points = " ".join(
        f"{i * step:.1f},{SPARK_H - 2 - (v - low) / spread * (SPARK_H - 4):.1f}"
        for i, v in enumerate(values)
        if not math.isnan(v)
    )
    label = (
        f"Median time to first token of {name}, last {len(values)} days: "
        f"between {fmt.ms(low)} and {fmt.ms(high)}, latest {fmt.ms(known[-1])}."
    )
    return Spark(points, label)


def _component(
    name: str,
    full_name: str,
    state: str,
    p50: float | None,
    rows: Sequence[int],
    history: History,
    shown: Sequence[Shown],
    base: np.ndarray,
) -> Component:
    bars = _bars(rows, history, shown, base)
    return Component(
        name,
        full_name,
        state,
        sp.LABEL[state],
        fmt.ms(p50),
        bars,
        _bars_label(bars, len(history.days)),
        _uptime(rows, history),
        _spark(rows, history, full_name),
    )


def _when(moment: datetime) -> str:
    return f"{moment:%d %b %Y %H:%M} UTC"


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def incident_view(incident, status: sp.Status, now: datetime) -> IncidentView:
    """A published incident (monitor.incidents.views.IncidentView) as the pages show it."""
    from monitor.incidents.feed import STATE_WORDS

    ongoing = incident.state != "resolved"
    end = now if ongoing or incident.resolved_at is None else incident.resolved_at
    impact = sp.worst(sp.component_states(status, incident.components)) if ongoing else sp.OPERATIONAL
    names = [c.removesuffix("/*") + (" (all models)" if c.endswith("/*") else "") for c in incident.components]
    updates = tuple(
        UpdateLine(STATE_WORDS.get(u.state, u.state), _when(u.at), _iso(u.at), u.message)
        for u in reversed(incident.updates)
    )
    return IncidentView(
        incident.id,
        incident.title,
        ongoing,
        impact,
        _when(incident.started_at),
        _iso(incident.started_at),
        "ongoing" if ongoing else _when(end),
        fmt.span((end - incident.started_at).total_seconds()),
        incident.provider,
        fmt.listed(names),
        updates,
    )


def maintenance_view(m: sp.Maintenance, now: datetime) -> MaintenanceView:
    when = f"{_when(m.starts_at)} to {_when(m.ends_at)}"
    if m.active(now):
        when = f"in progress until {_when(m.ends_at)} (began {_when(m.starts_at)})"
    names = [f"{p}/{model}" for p, model in m.components]
    return MaintenanceView(
        m.title,
        m.active(now),
        when,
        _iso(m.starts_at),
        _iso(m.ends_at),
        fmt.listed(names),
        m.providers,
    )


def build(
    snapshot,
    history: History,
    shown: Sequence[Shown],
    *,
    history_days: int,
    subscribe: bool = False,
    live_minutes: int = 15,
) -> Site:
    """The site from the public snapshot (`public.Snapshot`) and the daily history of `shown`."""
    status = snapshot.status
    row_of = {t: i for i, t in enumerate(history.targets)}
    base = baselines(history.ttft_p50_ms)
    providers = []
    now = snapshot.at
    incidents = [incident_view(i, status, now) for i in snapshot.published]
    live = tuple(i for i in incidents if i.ongoing)
    past = tuple(i for i in incidents if not i.ongoing)
    maintenance = tuple(maintenance_view(m, now) for m in snapshot.maintenance)
    for provider, state in status.providers.items():
        models = []
        provider_rows = []
        for (p, model), model_state in sorted(status.models.items()):
            if p != provider:
                continue
            rows = [row_of[s.id] for s in shown if s.provider == p and s.model == model and s.id in row_of]
            provider_rows += rows
            p50 = status.model_p50_ms.get((p, model))
            models.append(_component(model, f"{p}/{model}", model_state, p50, rows, history, shown, base))
        summary = _component(
            provider,
            provider,
            state,
            status.provider_p50_ms.get(provider),
            provider_rows,
            history,
            shown,
            base,
        )
        mine = tuple(i for i in (*live, *past) if i.provider == provider)
        planned = tuple(m for m in maintenance if provider in m.providers)
        providers.append(Provider(provider, summary, tuple(models), mine, planned))
    indicator = status.indicator
    return Site(
        snapshot.title,
        snapshot.url,
        _when(now),
        _iso(now),
        indicator,
        sp.DESCRIPTION[indicator],
        sp.worst(status.providers.values()),
        tuple(providers),
        live,
        past,
        maintenance,
        history_days,
        tuple(history.windows),
        tuple((level, LEVEL_TEXT[level]) for level in LEGEND),
        SLOW_RATIO,
        subscribe,
        live_minutes,
    )


def window_spans(history_days: int) -> dict[str, timedelta]:
    """The uptime windows shown: 24 h, 7 d, 30 d and the whole history, those within it."""
    spans = {"24 h": timedelta(hours=24), "7 d": timedelta(days=7), "30 d": timedelta(days=30)}
    out = {name: span for name, span in spans.items() if span < timedelta(days=history_days)}
    out[f"{history_days} d"] = timedelta(days=history_days)
    return out
