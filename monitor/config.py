"""Load `firsttoken.yaml` into a frozen `Config` (DESIGN §3), or fail with every error.

    config = load_config("firsttoken.yaml")          # env defaults to os.environ
    config.targets_for_agent(config.agent)           # the expanded matrix for this agent

Loading is pure apart from reading the file and its prompt files: YAML is
parsed, `${VAR}` interpolated in string values, then each section is read
into values while collecting `path: message` errors; if there is any, one
`ConfigError` carries them all and nothing starts. No input raises anything
else. The sections live in `config_sources` (prompts, providers),
`config_matrix` (checks, targets) and `config_alerts` (alerts, notifiers,
silences); the values in `config_schema`.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from monitor.config_alerts import build_alerting, build_alerts, build_notifiers
from monitor.config_matrix import build_checks, expand, timeout_message
from monitor.config_reader import NAME_HINT, NAME_RE, Reader, did_you_mean, join
from monitor.config_schema import (
    DAY,
    HOUR,
    Alerting,
    AlertmanagerConfig,
    AlertRule,
    AppriseConfig,
    Budget,
    Check,
    Config,
    ConfigError,
    Defaults,
    Expect,
    LogNotifierConfig,
    NotifierConfig,
    PagerDutyConfig,
    Price,
    Prompt,
    Provider,
    Reasoning,
    ResponseFormat,
    Retention,
    Silence,
    Synthetic,
    Target,
    ToolExpect,
    WebhookConfig,
)
from monitor.config_scope import build_matchable, build_silences
from monitor.config_sources import build_prompts, build_providers
from monitor.config_yaml import interpolate, parse_yaml

__all__ = [
    "AlertRule",
    "Alerting",
    "AlertmanagerConfig",
    "AppriseConfig",
    "Budget",
    "Check",
    "Config",
    "ConfigError",
    "Defaults",
    "Expect",
    "LogNotifierConfig",
    "NotifierConfig",
    "PagerDutyConfig",
    "Price",
    "Prompt",
    "Provider",
    "Reasoning",
    "ResponseFormat",
    "Retention",
    "Silence",
    "Synthetic",
    "Target",
    "ToolExpect",
    "WebhookConfig",
    "load_config",
    "load_config_text",
]  # fmt: skip

TOP_KEYS = (
    "database",
    "agent",
    "defaults",
    "prompts",
    "providers",
    "checks",
    "alerts",
    "notifiers",
    "silences",
    "prices",
    "retention",
    "alerting",
    "dashboard_url",
    "budget",
)
BUDGET_ACTIONS = ("warn", "refuse")
DEFAULT_KEYS = ("interval", "timeout", "ttft_timeout", "cache_bust", "max_concurrency", "max_per_provider_region")
DEFAULT_DATABASE_URL = "sqlite:///firsttoken.db"
MAX_FILE_BYTES = 10_000_000
_DB_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")


def load_config(path: str | Path, env: Mapping[str, str] | None = None) -> Config:
    """Read and validate a config file; prompt `file:`s are relative to its directory."""
    file = Path(path)
    try:
        data = file.read_bytes() if file.stat().st_size <= MAX_FILE_BYTES else None
    except (OSError, ValueError) as exc:
        raise ConfigError([f"cannot read the file: {getattr(exc, 'strerror', None) or exc}"], str(path)) from None
    if data is None:
        raise ConfigError([f"the file is larger than {MAX_FILE_BYTES // 1_000_000} MB"], str(path))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError([f"not UTF-8 text (byte {exc.start})"], str(path)) from None
    try:
        return _load(text, file.parent, env, file)
    except ConfigError as exc:
        raise ConfigError(exc.errors, str(path)) from None


def load_config_text(text: str, base_dir: str | Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Validate config text; prompt files resolve against `base_dir` (default: the working directory)."""
    return _load(text, Path(base_dir) if base_dir is not None else Path.cwd(), env, None)


def _load(text: str, base_dir: Path, env: Mapping[str, str] | None, source: Path | None) -> Config:
    env = os.environ if env is None else env
    if not isinstance(text, str):
        raise ConfigError([f"expected text, got {type(text).__name__}"])
    tree = parse_yaml(text)
    if not isinstance(tree, Mapping):
        got = "an empty document" if tree is None else f"a {type(tree).__name__}"
        raise ConfigError([f"top level: expected a mapping of settings (database, providers, checks ...), got {got}"])
    r = Reader()
    tree = interpolate(r, tree, env)
    _collect_secrets(r, tree, env)
    top = r.mapping(tree, "", TOP_KEYS) or {}
    config = _build(r, top, base_dir, env, source)
    if r.errors:
        raise ConfigError(r.final_errors())
    return config


def _build(r: Reader, top: dict[str, Any], base_dir: Path, env: Mapping[str, str], source: Path | None) -> Config:
    defaults = _defaults(r, top.get("defaults"))
    prompts = build_prompts(r, top.get("prompts"), base_dir)
    providers = build_providers(r, top.get("providers"))
    declared_providers = _declared(top.get("providers"))
    checks = build_checks(r, top.get("checks"), providers, declared_providers, _declared(top.get("prompts")))
    targets = expand(r, checks, providers, prompts, defaults)
    scope = build_matchable(providers, declared_providers, _declared(top.get("prompts")))
    alerts = build_alerts(r, top.get("alerts"), scope)
    notifiers = build_notifiers(r, top.get("notifiers"), {a.severity for a in alerts})
    dashboard_url = r.url(top["dashboard_url"], "dashboard_url") if top.get("dashboard_url") is not None else None
    return Config(
        database_url=_database_url(r, top, env),
        agent=_agent(r, top, env),
        defaults=defaults,
        prompts=MappingProxyType(prompts),
        providers=MappingProxyType(providers),
        checks=tuple(check for _, check in checks),
        targets=targets,
        alerts=alerts,
        notifiers=notifiers,
        silences=build_silences(r, top.get("silences"), scope),
        prices=MappingProxyType(_prices(r, top.get("prices"), providers, declared_providers)),
        retention=_retention(r, top.get("retention")),
        alerting=build_alerting(r, top.get("alerting")),
        dashboard_url=dashboard_url,
        budget=_budget(r, top.get("budget")),
        secrets=frozenset(s for s in r.secrets if s),
        source_path=source,
    )


def _declared(value: Any) -> set[str]:
    """Names a section declares, valid or not: a reference to a broken entry is not a second error."""
    return {k for k in value if isinstance(k, str)} if isinstance(value, Mapping) else set()


def _collect_secrets(r: Reader, tree: Mapping[str, Any], env: Mapping[str, str]) -> None:
    """Learn every secret before any error can quote a value that contains one."""
    providers = tree.get("providers")
    for spec in providers.values() if isinstance(providers, Mapping) else ():
        if isinstance(spec, Mapping):
            _add(r, spec.get("api_key"))
            _add(r, *(spec["headers"].values() if isinstance(spec.get("headers"), Mapping) else ()))
    notifiers = tree.get("notifiers")
    for spec in notifiers if isinstance(notifiers, list) else ():
        if isinstance(spec, Mapping):
            _add(r, spec.get("secret"), spec.get("routing_key"))
            _add(r, *(spec["urls"] if isinstance(spec.get("urls"), list) else ()))
            _add(r, *(spec["headers"].values() if isinstance(spec.get("headers"), Mapping) else ()))
            urls = spec.get("url") if isinstance(spec.get("url"), list) else [spec.get("url")]
            for url in urls:
                if isinstance(url, str):
                    with contextlib.suppress(ValueError):
                        _add(r, urlsplit(url.strip()).password)
    for url in (tree.get("database"), env.get("FIRSTTOKEN_DATABASE_URL")):
        if isinstance(url, str):
            with contextlib.suppress(ValueError):  # a bad URL is reported where it is read
                _add(r, urlsplit(url.strip()).password)


def _add(r: Reader, *values: Any) -> None:
    r.secrets.update(str(v) for v in values if isinstance(v, str | int | float) and not isinstance(v, bool) and str(v))


def _defaults(r: Reader, value: Any) -> Defaults:
    if value is None:
        return Defaults()
    d = r.mapping(value, "defaults", DEFAULT_KEYS)
    if d is None:
        return Defaults()
    base = Defaults()
    defaults = Defaults(
        interval_s=r.duration(d, "interval", "defaults", base.interval_s, max_s=DAY),
        timeout_s=r.duration(d, "timeout", "defaults", base.timeout_s, max_s=HOUR),
        ttft_timeout_s=r.duration(d, "ttft_timeout", "defaults", base.ttft_timeout_s, max_s=HOUR),
        cache_bust=r.boolean(d, "cache_bust", "defaults", base.cache_bust),
        max_concurrency=r.number(
            d, "max_concurrency", "defaults", base.max_concurrency, lo=1, hi=100_000, integer=True
        ),
        max_per_provider_region=r.number(
            d, "max_per_provider_region", "defaults", base.max_per_provider_region, lo=1, hi=100_000, integer=True
        ),
    )
    if defaults.ttft_timeout_s > defaults.timeout_s:
        r.error("defaults", timeout_message(defaults.ttft_timeout_s, defaults.timeout_s))
    return defaults


def _retention(r: Reader, value: Any) -> Retention:
    base = Retention()
    m = r.mapping(value, "retention", ("raw", "rollups")) if value is not None else None
    if m is None:
        return base
    raw = r.duration(m, "raw", "retention", base.raw_s, max_s=3650 * DAY, min_s=HOUR)
    rollups = r.duration(m, "rollups", "retention", base.rollups_s, max_s=3650 * DAY, min_s=HOUR)
    if rollups < raw:
        r.error("retention.rollups", "must be at least as long as raw")
    return Retention(raw_s=raw, rollups_s=rollups)


def _prices(r: Reader, value: Any, providers: Mapping[str, Provider], declared: set[str]) -> dict[str, Price]:
    prices: dict[str, Price] = {}
    m = r.mapping(value, "prices") if value is not None else None
    for key, spec in (m or {}).items():
        path = join("prices", key)
        name, _, model = key.partition("/")
        if not model:
            r.error(path, "expected provider/model, e.g. openai/gpt-4o-mini")
        elif name not in declared:
            r.error(path, f"unknown provider {name!r}{did_you_mean(name, declared)}")
        elif name in providers and model not in providers[name].models:
            r.error(path, f"provider {name!r} has no model {model!r}{did_you_mean(model, providers[name].models)}")
        s = r.mapping(spec, path, ("input", "output", "cached_input"), required=("input", "output"))
        if s is None:
            continue
        cost_in = r.number(s, "input", path, None, lo=0, hi=1e6)
        cost_out = r.number(s, "output", path, None, lo=0, hi=1e6)
        cached = r.number(s, "cached_input", path, None, lo=0, hi=1e6)
        if cost_in is not None and cost_out is not None:
            cached_input = None if cached is None else float(cached)
            prices[key] = Price(input=float(cost_in), output=float(cost_out), cached_input=cached_input)
    return prices


def _budget(r: Reader, value: Any) -> Budget | None:
    if value is None:
        return None
    m = r.mapping(value, "budget", ("monthly_usd", "action"), required=("monthly_usd",))
    if m is None:
        return None
    monthly = r.number(m, "monthly_usd", "budget", None, lo=0, hi=1e9, lo_open=True)
    action = r.text(m, "action", "budget", "warn")
    if action not in BUDGET_ACTIONS:
        r.error("budget.action", f"expected one of {', '.join(BUDGET_ACTIONS)}, got {r.show(action)}")
        return None
    return None if monthly is None else Budget(monthly_usd=float(monthly), action=action)


def _database_url(r: Reader, top: Mapping[str, Any], env: Mapping[str, str]) -> str:
    override = env.get("FIRSTTOKEN_DATABASE_URL")
    if override:
        path, url = "FIRSTTOKEN_DATABASE_URL (environment)", override
    else:
        path, url = "database", r.text(top, "database", "", DEFAULT_DATABASE_URL)
    if not isinstance(url, str) or not _DB_URL.fullmatch(url.strip()):
        r.error(
            path, f"not a database URL (like sqlite:///firsttoken.db or postgresql+psycopg://...), got {r.show(url)}"
        )
        return DEFAULT_DATABASE_URL
    problem = _database_url_problem(url.strip())
    if problem:
        r.error(path, problem)  # without the URL: it may hold a password
        return DEFAULT_DATABASE_URL
    return r.keep(url.strip())


def _database_url_problem(url: str) -> str | None:
    """What the storage layer would refuse at start-up, found now (and without importing SQLAlchemy)."""
    backend = url.split("://", 1)[0].split("+", 1)[0].lower()
    if backend not in ("sqlite", "postgres", "postgresql"):
        return f"unsupported database {backend!r}: use postgresql+psycopg://… or sqlite:///path"
    if backend == "sqlite":
        return None
    try:
        host_port = urlsplit(url).netloc.rpartition("@")[2]
    except ValueError:  # e.g. an unclosed [ of an IPv6 host
        return "not a database URL: the host cannot be parsed"
    port = host_port.rpartition("]")[2] if host_port.startswith("[") else host_port
    if ":" in port and not (port.rpartition(":")[2].isdigit() and int(port.rpartition(":")[2]) <= 65535):
        return "not a database URL: the port must be a number up to 65535"
    return None


def _agent(r: Reader, top: Mapping[str, Any], env: Mapping[str, str]) -> str:
    override = env.get("FIRSTTOKEN_AGENT")
    if override:
        if not NAME_RE.fullmatch(override):
            r.error("FIRSTTOKEN_AGENT (environment)", f"invalid agent name: {NAME_HINT}")
            return "local"
        return override
    return r.text(top, "agent", "", "local", name=True)
