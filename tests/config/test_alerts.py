"""Config sections for alerting: alerts, notifiers, silences; plus prices and retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.config import AppriseConfig, LogNotifierConfig, PagerDutyConfig, WebhookConfig, scope_matches
from tests.config_helpers import errors, load, minimal, one_error


def _rule(**fields) -> dict:
    return {"name": "r", "metric": "ttft_ms", "kind": "threshold", "above": 1000, **fields}


def _alerts(*rules) -> dict:
    return minimal(alerts=list(rules))


# ------------------------------------------------------------------ alerts
def test_regression_defaults():
    (rule,) = load(_alerts({"name": "reg", "metric": "tps", "kind": "regression"})).alerts
    assert (rule.min_change, rule.baseline_window_s, rule.window_s, rule.severity) == (0.5, 86400, 900, "page")
    assert (rule.min_samples, rule.for_evaluations, rule.pending_evaluations, rule.resolve_after) == (5, 2, 2, 3)
    assert rule.repeat_interval_s == 4 * 3600 and rule.percentile is None and rule.above is rule.below is None


def test_regression_settings():
    (rule,) = load(_alerts({"name": "reg", "metric": "ttft_ms", "kind": "regression", "min_change": "150%",
                            "baseline_window": "7d", "window": "30m", "min_samples": 10, "for_evaluations": 3,
                            "resolve_after": 5, "repeat_interval": "1h", "severity": "ticket"})).alerts  # fmt: skip
    assert (rule.min_change, rule.baseline_window_s, rule.window_s) == (1.5, 7 * 86400, 1800)
    assert (rule.min_samples, rule.for_evaluations, rule.resolve_after, rule.repeat_interval_s) == (10, 3, 5, 3600)
    assert rule.severity == "ticket"


def test_threshold_defaults_and_units():
    rules = load(_alerts(
        _rule(name="a"),
        _rule(name="b", above="2s", percentile=99),
        _rule(name="c", metric="tps", above=None, below=20),
        _rule(name="d", metric="error_rate", above="5%"),
        _rule(name="e", metric="error_rate", above=0.05),
        _rule(name="f", metric="total_ms", above=None, below="500ms", pending_evaluations=4),
    )).alerts  # fmt: skip
    a, b, c, d, e, f = rules
    assert (a.percentile, a.above, a.below) == (50, 1000, None)
    assert (b.percentile, b.above) == (99, 2000)
    assert (c.percentile, c.below, c.above) == (50, 20, None)
    assert (d.percentile, d.above) == (None, 0.05)
    assert e.above == 0.05
    assert (f.below, f.for_evaluations) == (500, 4)
    assert isinstance(a.above, float)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"metric": "ttft", "kind": "regression", "above": None},
         ["alerts[0].metric: unknown metric 'ttft' (did you mean 'ttft_ms'?); expected one of ttft_ms, ttft_answer_ms, total_ms, tps, error_rate, cache_hit_ratio"]),
        ({"kind": "threshhold"},
         ["alerts[0].kind: unknown kind 'threshhold' (did you mean 'threshold'?); expected one of regression, threshold, change"]),
        ({"name": None}, ["alerts[0].name: required"]),
        ({"name": "has space"}, ["alerts[0].name: invalid name 'has space': letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit"]),
        ({"above": None}, ["alerts[0]: a threshold needs exactly one of above or below"]),
        ({"below": 10}, ["alerts[0]: a threshold needs exactly one of above or below"]),
        ({"above": 0}, ["alerts[0].above: must be greater than 0 and at most 86,400,000"]),
        ({"above": "fast"}, ["alerts[0].above: expected milliseconds or a duration like 2s, got 'fast'"]),
        ({"percentile": 101}, ["alerts[0].percentile: must be at least 0 and at most 100"]),
        ({"metric": "error_rate", "above": 20}, ["alerts[0].above: a bare number is a fraction between 0 and 1; write 20% for a percentage, got 20"]),
        ({"metric": "error_rate", "above": "120%"}, ["alerts[0].above: must be between 0% and 100%, got '120%'"]),
        ({"metric": "error_rate", "above": "5%", "percentile": 90}, ["alerts[0].percentile: not for error_rate (it is a rate over the window)"]),
        ({"min_change": "50%"}, ["alerts[0].min_change: only for kind: regression"]),
        ({"kind": "regression"}, ["alerts[0].above: only for kind: threshold"]),
        ({"kind": "regression", "above": None, "min_change": "0%"}, ["alerts[0].min_change: must be more than 0%"]),
        ({"kind": "regression", "above": None, "min_change": 2}, ["alerts[0].min_change: a bare number is a fraction between 0 and 1; write 2% for a percentage, got 2"]),
        ({"kind": "regression", "above": None, "window": "2d"}, ["alerts[0].baseline_window: must be longer than window"]),
        ({"window": "8d"}, ["alerts[0].window: too long: at most 7d"]),
        ({"min_samples": 0}, ["alerts[0].min_samples: must be at least 1 and at most 100,000"]),
        ({"for_evaluations": 2, "pending_evaluations": 2}, ["alerts[0].pending_evaluations: give for_evaluations or pending_evaluations, not both"]),
        ({"resolve_after": 1.5}, ["alerts[0].resolve_after: expected a whole number"]),
        ({"repeat_interval": "0s"}, ["alerts[0].repeat_interval: must be longer than zero"]),
        ({"for_evaluation": 3}, ["alerts[0].for_evaluation: unknown key (did you mean 'for_evaluations'?)"]),
    ],
)  # fmt: skip
def test_alert_errors(rule, expected):
    data = _alerts({k: v for k, v in _rule(**rule).items() if v is not None})
    assert errors(data) == expected


def test_duplicate_rule_names():
    assert one_error(_alerts(_rule(), _rule())) == "alerts[1].name: duplicate rule name 'r' (also alerts[0])"


def test_alert_match():
    data = _alerts(_rule(match={"provider": "sim", "model": "f*", "region": "local", "prompt": "sh?rt"}))
    (rule,) = load(data).alerts
    assert dict(rule.match) == {"provider": "sim", "model": "f*", "region": "local", "prompt": "sh?rt"}
    assert rule.matches("sim", "fast", "local", "short")
    assert not rule.matches("sim", "slow", "local", "short")
    assert not rule.matches("sim", None, "local", None)  # a provider-wide scope is wider than the match


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        ({"provider": "smi"}, "alerts[0].match.provider: unknown provider 'smi' (did you mean 'sim'?)"),
        ({"model": "fats"}, "alerts[0].match.model: unknown model 'fats' (did you mean 'fast'?)"),
        ({"region": "locl"}, "alerts[0].match.region: unknown region 'locl' (did you mean 'local'?)"),
        ({"prompt": "shrt"}, "alerts[0].match.prompt: unknown prompt 'shrt' (did you mean 'short'?)"),
        ({"agent": "x"}, "alerts[0].match.agent: unknown key"),
        ({"provider": ""}, "alerts[0].match.provider: must not be empty"),
        ("sim", "alerts[0].match: expected a mapping, got a string"),
    ],
)
def test_alert_match_errors(match, expected):
    assert one_error(_alerts(_rule(match=match))) == expected


def test_scope_matches_wildcards():
    assert scope_matches({}, provider="a")
    assert scope_matches({"model": "*"}, provider="a", model=None)
    assert scope_matches({"provider": "open*"}, provider="openai")
    assert not scope_matches({"provider": "open*"}, provider="anthropic")


# --------------------------------------------------------------- notifiers
def test_every_notifier_type():
    data = _alerts(_rule(severity="page"), _rule(name="t", severity="ticket"))
    data["notifiers"] = [
        {"name": "w", "type": "webhook", "url": "https://hooks.example.com/x", "secret": "${HOOK_SECRET}",
         "headers": {"Authorization": "Bearer ${HOOK_TOKEN}"}, "timeout": "5s", "severities": ["ticket"]},
        {"name": "pd", "type": "pagerduty", "routing_key": "${PD_KEY}", "url": "http://127.0.0.1:9/enqueue"},
        {"name": "ap", "type": "apprise", "urls": ["mailto://u:p@example.com", "${CHAT_URL}"]},
        {"name": "log", "type": "log"},
    ]  # fmt: skip
    env = {
        "HOOK_SECRET": "hmac-secret-1",
        "HOOK_TOKEN": "hook-token-2",
        "PD_KEY": "pd-key-3",
        "CHAT_URL": "tgram://bot/chat",
    }
    config = load(data, env=env)
    w, pd, ap, log = config.notifiers
    assert isinstance(w, WebhookConfig) and (w.url, w.secret, w.timeout_s) == (
        "https://hooks.example.com/x",
        "hmac-secret-1",
        5,
    )
    assert dict(w.headers) == {"Authorization": "Bearer hook-token-2"} and w.wants("ticket") and not w.wants("page")
    assert isinstance(pd, PagerDutyConfig) and (pd.routing_key, pd.url, pd.timeout_s) == (
        "pd-key-3",
        "http://127.0.0.1:9/enqueue",
        10,
    )
    assert isinstance(ap, AppriseConfig) and ap.urls == ("mailto://u:p@example.com", "tgram://bot/chat")
    assert isinstance(log, LogNotifierConfig) and log.type == "log" and log.severities == ()
    assert {
        "hmac-secret-1",
        "Bearer hook-token-2",
        "pd-key-3",
        "mailto://u:p@example.com",
        "tgram://bot/chat",
    } <= config.secrets
    text = repr(config.notifiers)
    for secret in (*env.values(), "u:p@example.com"):
        assert secret not in text


@pytest.mark.parametrize(
    ("notifier", "expected"),
    [
        ({"name": "n", "type": "webhok"},
         ["notifiers[0].type: unknown notifier type 'webhok' (did you mean 'webhook'?); expected one of alertmanager, apprise, email, log, pagerduty, slack, teams, webhook"]),
        ({"name": "n"}, ["notifiers[0].type: required: one of alertmanager, apprise, email, log, pagerduty, slack, teams, webhook"]),
        ({"name": "n", "type": "webhook"}, ["notifiers[0].url: required"]),
        ({"name": "n", "type": "webhook", "url": "nope"}, ["notifiers[0].url: not a URL (expected http://host/... or https://host/...), got 'nope'"]),
        ({"name": "n", "type": "webhook", "url": "http://h", "routing_key": "x"}, ["notifiers[0].routing_key: unknown key"]),
        ({"name": "n", "type": "webhook", "url": "http://h", "timeout": "10m"}, ["notifiers[0].timeout: too long: at most 5m"]),
        ({"name": "n", "type": "pagerduty"}, ["notifiers[0].routing_key: required"]),
        ({"name": "n", "type": "pagerduty", "routing_key": ""}, ["notifiers[0].routing_key: must not be empty"]),
        ({"name": "n", "type": "pagerduty", "routing_key": 5}, ["notifiers[0].routing_key: expected a string, got a number"]),
        ({"name": "n", "type": "apprise"}, ["notifiers[0].urls: required: at least one apprise URL"]),
        ({"name": "n", "type": "apprise", "urls": ["slack"]}, ["notifiers[0].urls[0]: not an apprise URL (expected scheme://...)"]),
        ({"name": "n", "type": "log", "url": "http://h"}, ["notifiers[0].url: unknown key"]),
        ({"name": "n", "type": "log", "severities": ["pgae"]}, ["notifiers[0].severities[0]: no alert rule has severity 'pgae' (did you mean 'page'?)"]),
        ({"type": "log"}, ["notifiers[0].name: required"]),
        ("log", ["notifiers[0]: expected a mapping, got a string"]),
    ],
)  # fmt: skip
def test_notifier_errors(notifier, expected):
    data = _alerts(_rule())
    data["notifiers"] = [notifier]
    assert errors(data) == expected


def test_duplicate_notifier_names():
    data = minimal(notifiers=[{"name": "n", "type": "log"}, {"name": "n", "type": "log"}])
    assert one_error(data) == "notifiers[1].name: duplicate notifier name 'n' (also notifiers[0])"


def test_severities_are_free_when_there_are_no_rules():
    (n,) = load(minimal(notifiers=[{"name": "n", "type": "log", "severities": ["page", "info"]}])).notifiers
    assert n.severities == ("page", "info")


def test_bad_webhook_url_from_secret_is_masked():
    data = minimal(notifiers=[{"name": "n", "type": "webhook", "url": "${HOOK_URL_TOKEN}"}])
    assert one_error(data, env={"HOOK_URL_TOKEN": "zz-not-a-url-zz"}).endswith("got '***'")


# ---------------------------------------------------------------- silences
def test_silences():
    data = minimal(silences=[
        {"match": {"provider": "sim", "model": "f*"}, "until": "2026-12-01T06:00:00Z", "reason": "maintenance"},
        {"match": {"region": "local"}, "starts": "2026-01-01T00:00:00+02:00", "until": "2026-01-02"},
    ])  # fmt: skip
    first, second = load(data).silences
    assert (
        first.until == datetime(2026, 12, 1, 6, tzinfo=UTC) and first.starts is None and first.reason == "maintenance"
    )
    assert second.starts == datetime(2025, 12, 31, 22, tzinfo=UTC) and second.until == datetime(2026, 1, 2, tzinfo=UTC)
    assert second.reason == ""
    assert first.matches("sim", "fast", "local", "short") and not first.matches("other", "fast")
    assert first.active(first.until - timedelta(seconds=1)) and not first.active(first.until)
    assert not second.active(second.starts - timedelta(seconds=1)) and second.active(second.starts)


@pytest.mark.parametrize(
    ("silence", "expected"),
    [
        ({"match": {"provider": "sim"}}, ["silences[0].until: required"]),
        ({"until": "2026-01-01T00:00:00Z"}, ["silences[0].match: required"]),
        ({"match": {}, "until": "2026-01-01T00:00:00Z"}, ["silences[0].match: must name at least one of provider, model, region, prompt"]),
        ({"match": {"provider": "sim"}, "until": "2026-01-01T00:00:00"}, ["silences[0].until: needs a time zone: end it with Z for UTC"]),
        ({"match": {"provider": "sim"}, "until": "tomorrow"}, ["silences[0].until: not an ISO 8601 time like 2026-12-01T06:00:00Z, got 'tomorrow'"]),
        ({"match": {"provider": "sim"}, "until": 5}, ["silences[0].until: expected an ISO 8601 time, got a number"]),
        ({"match": {"provider": "sim"}, "starts": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, ["silences[0].until: must be after starts"]),
        ({"match": {"provider": "sm"}, "until": "2026-01-01T00:00:00Z"}, ["silences[0].match.provider: unknown provider 'sm' (did you mean 'sim'?)"]),
        ({"match": {"provider": "sim"}, "until": "2026-01-01T00:00:00Z", "why": "x"}, ["silences[0].why: unknown key"]),
    ],
)  # fmt: skip
def test_silence_errors(silence, expected):
    assert errors(minimal(silences=[silence])) == expected


def test_silence_yaml_timestamps():
    text = "silences:\n  - match: {provider: a}\n    until: 2026-12-01T06:00:00Z\n  - match: {provider: b}\n    until: 2026-12-02\n"
    first, second = load(text).silences
    assert first.until == datetime(2026, 12, 1, 6, tzinfo=UTC) and second.until == datetime(2026, 12, 2, tzinfo=UTC)
    naive = "silences:\n  - match: {provider: a}\n    until: 2026-12-01 06:00:00\n"
    assert one_error(naive) == "silences[0].until: needs a time zone: end it with Z for UTC"


# ------------------------------------------------------ prices, retention
def test_prices():
    data = minimal(prices={"sim/fast": {"input": 0, "output": 1.5}})
    config = load(data)
    assert config.price("sim", "fast").output == 1.5
    assert config.price("sim", "fast").cost_usd(2000, None) == 0


def test_prices_with_slashes_in_the_model_name():
    data = minimal()
    data["providers"]["sim"]["models"] = ["meta-llama/llama-3.1-8b"]
    data["prices"] = {"sim/meta-llama/llama-3.1-8b": {"input": 1, "output": 2}}
    assert load(data).price("sim", "meta-llama/llama-3.1-8b").input == 1


@pytest.mark.parametrize(
    ("prices", "expected"),
    [
        ({"sim/slow": {"input": 1, "output": 1}}, ["prices.sim/slow: provider 'sim' has no model 'slow'"]),
        ({"sm/fast": {"input": 1, "output": 1}}, ["prices.sm/fast: unknown provider 'sm' (did you mean 'sim'?)"]),
        ({"fast": {"input": 1, "output": 1}}, ["prices.fast: expected provider/model, e.g. openai/gpt-4o-mini"]),
        ({"sim/fast": {"input": -1, "output": 1}}, ["prices.sim/fast.input: must be at least 0 and at most 1,000,000"]),
        ({"sim/fast": {"input": 1}}, ["prices.sim/fast.output: required"]),
        ({"sim/fast": {"input": 1, "output": "1$"}}, ["prices.sim/fast.output: expected a number, got a string"]),
        ({"sim/fast": 3}, ["prices.sim/fast: expected a mapping, got a number"]),
    ],
)
def test_price_errors(prices, expected):
    assert errors(minimal(prices=prices)) == expected


def test_retention():
    config = load(minimal(retention={"raw": "7d", "rollups": "730d"}))
    assert (config.retention.raw_s, config.retention.rollups_s) == (7 * 86400, 730 * 86400)
    assert (
        one_error(minimal(retention={"raw": "30d", "rollups": "1d"}))
        == "retention.rollups: must be at least as long as raw"
    )
    assert one_error(minimal(retention={"raw": "10m"})) == "retention.raw: must be longer than 1h"
    assert one_error(minimal(retention={"rollups": "5000d"})) == "retention.rollups: too long: at most 3650d"
    assert one_error(minimal(retention={"keep": "1d"})) == "retention.keep: unknown key"


def test_alerting_timings_default_and_override():
    from monitor.alerts.engine import alert_jobs_for

    default = load(minimal()).alerting
    assert (default.evaluate_every_s, default.group_wait_s, default.give_up_after_s) == (30.0, 60.0, 86400.0)
    tuned = load(
        minimal(alerting={"evaluate_every": "10s", "deliver_every": "2s", "settle": "5s", "group_wait": "2m",
                          "retry_after": "30s", "retry_max": "1h", "give_up_after": "3d"})
    ).alerting  # fmt: skip
    assert (tuned.evaluate_every_s, tuned.deliver_every_s, tuned.settle_s, tuned.group_wait_s) == (10, 2, 5, 120)
    assert (tuned.retry_after_s, tuned.retry_max_s, tuned.give_up_after_s) == (30, 3600, 3 * 86400)
    jobs = alert_jobs_for(tuned)
    assert {name: every for name, (every, _) in jobs.items()} == {"alerts.evaluate": 10, "alerts.deliver": 2}


@pytest.mark.parametrize(
    ("alerting", "expected"),
    [
        ({"evaluate_every": "0s"}, "alerting.evaluate_every: must be longer than zero"),
        ({"evaluate_every": "2h"}, "alerting.evaluate_every: too long: at most 1h"),
        ({"group_wait": "soon"}, "alerting.group_wait: "),
        ({"retry_after": "10m", "retry_max": "1m"}, "alerting.retry_max: must be at least retry_after"),
        ({"retry_after": "20m", "give_up_after": "10m"}, "alerting.give_up_after: must be at least retry_after"),
        ({"group_interval": "5m"}, "alerting.group_interval: unknown key"),
        ("30s", "alerting: expected a mapping"),
    ],
)
def test_alerting_errors(alerting, expected):
    assert one_error(minimal(alerting=alerting)).startswith(expected)
