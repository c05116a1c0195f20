"""The weekly report (DESIGN §17), assembled: per provider the week against the week before, the
week's incidents, the SLO budgets left, one chart per provider.

    report = build_weekly_report(engine, targets, week, providers=("openai",), slos=config.slos,
                                 maintenance=config.maintenance)

`targets`: objects with `id` and `provider` (the config's targets, or the database's for the
dashboard without a config). The figures are `figures.WeekFigures`, read by `read`; the charts are
PNG bytes (`chart`), rendered by `render` as data: URLs (the page, the PDF) or inline parts (mail).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine

from monitor.palette import provider_colors
from monitor.reports.schedule import Week
from monitor.reports.weekly import chart, figures, read


@dataclass(frozen=True, slots=True)
class ProviderSection:
    provider: str
    now: figures.WeekFigures
    before: figures.WeekFigures
    changes: tuple[figures.Change, ...]
    verdict: str
    daily_ttft_p50_ms: tuple[float | None, ...]
    daily_ttft_p50_ms_before: tuple[float | None, ...]
    incidents: int  # of the week

    def change(self, key: str) -> figures.Change:
        return next(c for c in self.changes if c.key == key)


@dataclass(frozen=True)
class WeeklyReport:
    title: str
    week: Week
    previous: Week
    generated_at: datetime
    sections: tuple[ProviderSection, ...]
    incidents: tuple[read.IncidentLine, ...]
    budgets: tuple[read.BudgetLine, ...]
    charts: dict[str, bytes]  # provider -> PNG

    @property
    def zone_name(self) -> str:
        return str(self.week.zone.key)

    def section(self, provider: str) -> ProviderSection:
        return next(s for s in self.sections if s.provider == provider)

    @property
    def worse(self) -> tuple[str, ...]:
        return tuple(s.provider for s in self.sections if s.verdict == "worse")


DEFAULT_TITLE = "Weekly LLM provider report"


def title_for(config) -> str:
    """The report's title: the status site's, when the config gives it one."""
    site = getattr(getattr(config, "status_site", None), "title", None)
    return f"{site}: weekly report" if site and site != "LLM provider status" else DEFAULT_TITLE


def build_weekly_report(
    engine: Engine,
    targets: Sequence,
    week: Week,
    *,
    providers: Sequence[str] = (),
    slos: Sequence = (),
    maintenance: Sequence = (),
    title: str = DEFAULT_TITLE,
    now: datetime | None = None,
) -> WeeklyReport:
    """`providers`: only these (empty: every provider of `targets`)."""
    chosen = [t for t in targets if not providers or t.provider in providers]
    previous = week.before()
    this_weeks = read.provider_weeks(engine, chosen, week, maintenance)
    last_weeks = read.provider_weeks(engine, chosen, previous, maintenance)
    names = sorted(this_weeks)
    incidents = read.incidents_between(engine, week.start, week.end, names)
    sections, charts = [], {}
    colors = provider_colors(names)  # one colour per provider, the dashboard's
    for name in names:
        now_week, before_week = this_weeks[name], last_weeks[name]
        found = figures.changes(now_week.figures, before_week.figures)
        sections.append(
            ProviderSection(
                name,
                now_week.figures,
                before_week.figures,
                found,
                figures.verdict(now_week.figures, before_week.figures, found),
                now_week.daily_ttft_p50_ms,
                before_week.daily_ttft_p50_ms,
                sum(1 for i in incidents if i.provider == name),
            )
        )
        charts[name] = chart.ttft_week_png(
            name, now_week.daily_ttft_p50_ms, before_week.daily_ttft_p50_ms, (week.label, previous.label), colors[name]
        )
    budgets = read.slo_budgets(engine, slos, targets, maintenance, week, names)
    return WeeklyReport(
        title, week, previous, now or datetime.now(UTC), tuple(sections), tuple(incidents), tuple(budgets), charts
    )


__all__ = ["DEFAULT_TITLE", "ProviderSection", "WeeklyReport", "build_weekly_report", "title_for"]
