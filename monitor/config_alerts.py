"""`alerts:`, `notifiers:` and `alerting:` (DESIGN §5)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from monitor.config_reader import Reader, did_you_mean, index, join, kind
from monitor.config_schema import (
    CHANGE_METRICS,
    DAY,
    HOUR,
    LATENCY_METRICS,
    METRICS,
    MINUTE,
    NOTIFIER_TYPES,
    PAGERDUTY_URL,
    Alerting,
    AlertmanagerConfig,
    AlertRule,
    AppriseConfig,
    LogNotifierConfig,
    NotifierConfig,
    PagerDutyConfig,
    WebhookConfig,
)
from monitor.config_scope import build_match
from monitor.units import parse_duration

KINDS = ("regression", "threshold", "change")
ALERT_KEYS = (
    "name",
    "metric",
    "kind",
    "severity",
    "min_change",
    "percentile",
    "above",
    "below",
    "window",
    "min_samples",
    "for_evaluations",
    "pending_evaluations",
    "resolve_after",
    "repeat_interval",
    "match",
    "baseline_window",
)
THRESHOLD_ONLY = ("percentile", "above", "below")
REGRESSION_ONLY = ("min_change", "baseline_window")
# A change rule compares labels (served_by, fingerprints), not numbers over a window.
NOT_FOR_CHANGE = ("window", "min_samples", *THRESHOLD_ONLY, *REGRESSION_ONLY)
CHANGE_EVALUATIONS = 3  # a label must differ this many rounds in a row: one odd answer is not a change
NOTIFIER_KEYS = {
    "webhook": ("url", "secret", "headers", "timeout"),
    "pagerduty": ("routing_key", "url", "timeout"),
    "apprise": ("urls",),
    "log": (),
    "alertmanager": ("url", "timeout", "resend_every"),
}
MAX_LATENCY_MS = 24 * HOUR * 1000


def build_alerts(r: Reader, value: Any, scope_names: Mapping[str, set[str]]) -> tuple[AlertRule, ...]:
    rules: list[AlertRule] = []
    seen: dict[str, str] = {}
    for path, spec in r.items({"alerts": value}, "alerts", ""):
        s = r.mapping(spec, path, ALERT_KEYS, required=("name", "metric", "kind"))
        if s is None:
            continue
        before = len(r.errors)
        name = _unique_name(r, s, path, seen, "rule")
        metric = _metric(r, s, path, is_change=s.get("kind") == "change")
        rule_kind = _choice(r, s, "kind", path, KINDS)
        window = r.duration(s, "window", path, 15 * MINUTE, max_s=7 * DAY)
        if "for_evaluations" in s and "pending_evaluations" in s:
            r.error(join(path, "pending_evaluations"), "give for_evaluations or pending_evaluations, not both")
        for_key = "pending_evaluations" if "pending_evaluations" in s else "for_evaluations"
        fields: dict[str, Any] = dict(
            severity=r.text(s, "severity", path, "page", name=True),
            window_s=window,
            min_samples=r.number(s, "min_samples", path, 5, lo=1, hi=100_000, integer=True),
            for_evaluations=r.number(
                s, for_key, path, CHANGE_EVALUATIONS if rule_kind == "change" else 2, lo=1, hi=1000, integer=True
            ),
            resolve_after=r.number(s, "resolve_after", path, 3, lo=1, hi=1000, integer=True),
            repeat_interval_s=r.duration(s, "repeat_interval", path, 4 * HOUR, max_s=30 * DAY),
            match=build_match(r, s, path, scope_names),
        )
        if rule_kind == "regression":
            fields.update(_regression(r, s, path, window))
        elif rule_kind == "threshold" and metric is not None:
            fields.update(_threshold(r, s, path, metric))
        elif rule_kind == "change":
            for key in NOT_FOR_CHANGE:
                if s.get(key) is not None:
                    r.error(join(path, key), "not for kind: change")
        if len(r.errors) == before:
            rules.append(AlertRule(name=name, metric=metric, kind=rule_kind, **fields))
    return tuple(rules)


def _regression(r: Reader, s: Mapping[str, Any], path: str, window: float) -> dict[str, Any]:
    for key in THRESHOLD_ONLY:
        if s.get(key) is not None:
            r.error(join(path, key), "only for kind: threshold")
    min_change = 0.5
    if s.get("min_change") is not None:
        min_change = r.percent(s["min_change"], join(path, "min_change"), 0.5, max_fraction=10.0, positive=True)
    baseline = r.duration(s, "baseline_window", path, DAY, max_s=90 * DAY)
    if baseline <= window:
        r.error(join(path, "baseline_window"), "must be longer than window")
    return {"min_change": min_change, "baseline_window_s": baseline}


def _threshold(r: Reader, s: Mapping[str, Any], path: str, metric: str) -> dict[str, Any]:
    for key in REGRESSION_ONLY:
        if s.get(key) is not None:
            r.error(join(path, key), "only for kind: regression")
    given = [k for k in ("above", "below") if s.get(k) is not None]
    if len(given) != 1:
        r.error(path, "a threshold needs exactly one of above or below")
    out: dict[str, Any] = {"percentile": None}
    if metric == "error_rate":
        if s.get("percentile") is not None:
            r.error(join(path, "percentile"), "not for error_rate (it is a rate over the window)")
        for key in given:
            out[key] = r.percent(s[key], join(path, key), None)
        return out
    out["percentile"] = float(r.number(s, "percentile", path, 50.0, lo=0, hi=100))
    for key in given:
        out[key] = _level(r, s[key], join(path, key), metric)
    return out


def _level(r: Reader, value: Any, path: str, metric: str) -> float | None:
    """Milliseconds for latency metrics (a number, or a duration like `2s`); tokens/s for tps."""
    if metric in LATENCY_METRICS and isinstance(value, str):
        try:
            ms = parse_duration(value) * 1000
        except ValueError:
            r.error(path, f"expected milliseconds or a duration like 2s, got {r.show(value)}")
            return None
        value = ms
    hi = MAX_LATENCY_MS if metric in LATENCY_METRICS else 1e6
    level = r.check_number(value, path, None, lo=0, hi=hi, lo_open=True)
    return None if level is None else float(level)


def _metric(r: Reader, s: Mapping[str, Any], path: str, *, is_change: bool) -> str | None:
    metric = r.text(s, "metric", path)
    wanted, other = (CHANGE_METRICS, METRICS) if is_change else (METRICS, CHANGE_METRICS)
    if metric is None or metric in wanted:
        return metric
    sub = join(path, "metric")
    if metric in other:
        r.error(
            sub, f"{metric} {'is not for' if is_change else 'needs'} kind: change; expected one of {', '.join(wanted)}"
        )
    else:
        r.error(
            sub, f"unknown metric {r.show(metric)}{did_you_mean(metric, wanted)}; expected one of {', '.join(wanted)}"
        )
    return None


def _choice(r: Reader, s: Mapping[str, Any], key: str, path: str, choices: tuple[str, ...]) -> str | None:
    value = r.text(s, key, path)
    if value is not None and value not in choices:
        r.error(
            join(path, key),
            f"unknown {key} {r.show(value)}{did_you_mean(value, choices)}; expected one of {', '.join(choices)}",
        )
        return None
    return value


def _unique_name(r: Reader, s: Mapping[str, Any], path: str, seen: dict[str, str], what: str) -> str | None:
    name = r.text(s, "name", path, name=True)
    if name is not None:
        if name in seen:
            r.error(join(path, "name"), f"duplicate {what} name {name!r} (also {seen[name]})")
        seen.setdefault(name, path)
    return name


# ----------------------------------------------------------------- notifiers
def build_notifiers(r: Reader, value: Any, severities_used: set[str]) -> tuple[NotifierConfig, ...]:
    out: list[NotifierConfig] = []
    seen: dict[str, str] = {}
    for path, spec in r.items({"notifiers": value}, "notifiers", ""):
        ntype = spec.get("type") if isinstance(spec, Mapping) else None
        if isinstance(spec, Mapping) and not (isinstance(ntype, str) and ntype in NOTIFIER_TYPES):
            if ntype is None:
                r.error(join(path, "type"), f"required: one of {', '.join(NOTIFIER_TYPES)}")
            else:
                shown = r.show(ntype) if isinstance(ntype, str) else kind(ntype)
                r.error(
                    join(path, "type"),
                    f"unknown notifier type {shown}{did_you_mean(ntype, NOTIFIER_TYPES)}; "
                    f"expected one of {', '.join(NOTIFIER_TYPES)}",
                )
            continue
        extra = NOTIFIER_KEYS.get(ntype, ())
        s = r.mapping(spec, path, ("name", "type", "severities", *extra), required=("name", "type"))
        if s is None:
            continue
        before = len(r.errors)
        common = {
            "name": _unique_name(r, s, path, seen, "notifier"),
            "severities": _severities(r, s, path, severities_used),
        }
        notifier = _notifier(r, s, path, ntype, common)
        if len(r.errors) == before and notifier is not None:
            out.append(notifier)
    return tuple(out)


def _notifier(r: Reader, s: Mapping[str, Any], path: str, ntype: str, common: dict[str, Any]) -> NotifierConfig | None:
    timeout = r.duration(s, "timeout", path, 10.0, max_s=5 * MINUTE)
    if ntype == "webhook":
        url = r.url(s["url"], join(path, "url")) if s.get("url") is not None else _required(r, path, "url")
        secret = r.secret(s, "secret", path)
        headers = MappingProxyType(r.header_map(s, "headers", path))
        return WebhookConfig(url=url, secret=secret, headers=headers, timeout_s=timeout, **common)
    if ntype == "pagerduty":
        key = r.secret(s, "routing_key", path, required=True)
        url = r.url(s["url"], join(path, "url")) if s.get("url") is not None else PAGERDUTY_URL
        return PagerDutyConfig(routing_key=key, url=url, timeout_s=timeout, **common)
    if ntype == "apprise":
        return AppriseConfig(urls=_apprise_urls(r, s, path), **common)
    if ntype == "alertmanager":
        return AlertmanagerConfig(
            urls=_alertmanager_urls(r, s, path),
            timeout_s=timeout,
            resend_every_s=r.duration(s, "resend_every", path, 60.0, max_s=HOUR),
            **common,
        )
    return LogNotifierConfig(**common)


def _required(r: Reader, path: str, key: str) -> None:
    r.error(join(path, key), "required")


def _apprise_urls(r: Reader, s: Mapping[str, Any], path: str) -> tuple[str, ...]:
    urls = []
    items = r.items(s, "urls", path)
    if not items:
        r.error(join(path, "urls"), "required: at least one apprise URL")
    for upath, item in items:
        if isinstance(item, str) and item:
            r.secrets.add(item)  # apprise URLs carry tokens (slack://T/B/secret)
        got = r.check_text(item, upath)
        if got is not None and "://" not in got:
            r.error(upath, "not an apprise URL (expected scheme://...)")
        elif got is not None:
            urls.append(got)
    return tuple(urls)


def _alertmanager_urls(r: Reader, s: Mapping[str, Any], path: str) -> tuple[str, ...]:
    """One URL, or a list: every member of an Alertmanager cluster gets each alert (they dedupe)."""
    value = s.get("url")
    if value is None:
        r.error(join(path, "url"), "required")
        return ()
    if not isinstance(value, list):
        got = r.url(value, join(path, "url"))
        return () if got is None else (got,)
    if not value:
        r.error(join(path, "url"), "must not be empty")
    urls = [r.url(item, upath) for upath, item in r.items(s, "url", path)]
    return tuple(u for u in urls if u is not None)


def _severities(r: Reader, s: Mapping[str, Any], path: str, used: set[str]) -> tuple[str, ...]:
    # A misspelt severity routes nothing to this notifier: nobody gets paged.
    severities = r.str_list(s, "severities", path, name=True)
    if used:
        for i, severity in enumerate(severities):
            if severity not in used:
                r.error(
                    index(join(path, "severities"), i),
                    f"no alert rule has severity {severity!r}{did_you_mean(severity, used)}",
                )
    return severities


ALERTING_KEYS = ("evaluate_every", "deliver_every", "settle", "group_wait", "retry_after", "retry_max", "give_up_after")


def build_alerting(r: Reader, value: Any) -> Alerting:
    """`alerting:` timings, each optional; the defaults suit 1-5 minute probe intervals."""
    base = Alerting()
    m = r.mapping(value, "alerting", ALERTING_KEYS) if value is not None else None
    if m is None:
        return base

    def seconds(key: str, default: float, max_s: float) -> float:
        return r.duration(m, key, "alerting", default, max_s=max_s)

    alerting = Alerting(
        evaluate_every_s=seconds("evaluate_every", base.evaluate_every_s, HOUR),
        deliver_every_s=seconds("deliver_every", base.deliver_every_s, 10 * MINUTE),
        settle_s=seconds("settle", base.settle_s, 10 * MINUTE),
        group_wait_s=seconds("group_wait", base.group_wait_s, HOUR),
        retry_after_s=seconds("retry_after", base.retry_after_s, HOUR),
        retry_max_s=seconds("retry_max", base.retry_max_s, DAY),
        give_up_after_s=seconds("give_up_after", base.give_up_after_s, 7 * DAY),
    )
    if alerting.retry_max_s < alerting.retry_after_s:
        r.error("alerting.retry_max", "must be at least retry_after")
    if alerting.give_up_after_s < alerting.retry_after_s:
        r.error("alerting.give_up_after", "must be at least retry_after")
    return alerting
