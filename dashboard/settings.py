"""Where the dashboard reads from and who may see it, from the environment.

`firsttoken dashboard` sets FIRSTTOKEN_CONFIG and FIRSTTOKEN_DASHBOARD_DATABASE_URL
for the Streamlit process; run by hand (`streamlit run dashboard/app.py`) the
same variables work, with ./firsttoken.yaml as the default config.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from monitor.addresses import is_loopback

ENV_DASHBOARD_URL = "FIRSTTOKEN_DASHBOARD_DATABASE_URL"
ENV_DATABASE_URL = "FIRSTTOKEN_DATABASE_URL"
ENV_READ_DATABASE_URL = "FIRSTTOKEN_READ_DATABASE_URL"  # a streaming replica: the dashboard only reads
ENV_CONFIG = "FIRSTTOKEN_CONFIG"
ENV_PASSWORD = "FIRSTTOKEN_DASHBOARD_PASSWORD"
DEFAULT_CONFIG = "firsttoken.yaml"
DEFAULT_DATABASE_URL = "sqlite:///firsttoken.db"


@dataclass(frozen=True)
class TargetSettings:
    """What the target page shows of a configured target: how it is probed, never a secret
    (no API key, no headers, the endpoint's scheme and host only: URLs can carry tokens)."""

    protocol: str
    endpoint: str
    interval_s: float
    timeout_s: float
    ttft_timeout_s: float
    prompt: str
    max_tokens: int
    messages: tuple[tuple[str, str], ...]  # (role, first 300 characters), as configured
    agents: tuple[str, ...]


@dataclass(frozen=True)
class Settings:
    database_url: str
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # "provider/model" -> (in, out) USD/Mtok
    config_problem: str | None = None
    dashboard_url: str | None = None
    targets: Mapping[str, TargetSettings] = field(default_factory=dict)  # target id -> settings
    slos: tuple = ()  # the config's `slos:` (DESIGN §12)
    slo_targets: tuple = ()  # the configured targets as TargetRefs: what the SLOs' `match:` picks from
    # "provider/model" -> config Price, for what prompt caching saved (cached_input, cache_write)
    full_prices: Mapping[str, Any] = field(default_factory=dict)
    maintenance: tuple = ()  # the config's `maintenance:` windows: SLO figures leave them out (DESIGN §16)
    status_site_url: str | None = None  # `status_site.url`: the public status page (DESIGN §16)
    # The loaded config itself (placeholders for unset secrets): the Reports page builds what the
    # commands build from it (`reports:` entries, providers' `contract:`s; DESIGN §17).
    config: Any = field(default=None, repr=False, compare=False)


def target_settings(target) -> TargetSettings:
    from monitor.redact import host_of

    spec = target.prompt_spec
    return TargetSettings(
        protocol=target.protocol,
        endpoint=host_of(target.base_url),
        interval_s=target.interval_s,
        timeout_s=target.timeout_s,
        ttft_timeout_s=target.ttft_timeout_s,
        prompt=target.prompt,
        max_tokens=spec.max_tokens,
        messages=tuple((m.role, m.content[:300]) for m in spec.messages),
        agents=tuple(target.agents),
    )


class _Lenient(Mapping[str, str]):
    """The environment, with every unset variable set to a placeholder.

    The dashboard needs only `database`, `prices` and `dashboard_url`; it must
    start where the providers' API keys (referenced as ${VAR}) are not set.
    """

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env

    def __getitem__(self, key: str) -> str:
        if key.startswith("FIRSTTOKEN_"):  # the loader's own overrides keep their meaning
            return self._env[key]
        return self._env.get(key, "unset-in-dashboard")

    def __contains__(self, key: object) -> bool:
        return key in self._env or not str(key).startswith("FIRSTTOKEN_")

    def __iter__(self):
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)

    def get(self, key, default=None):
        return self[key] if key in self else default  # noqa: SIM401 (Mapping.get would recurse here)


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    path = env.get(ENV_CONFIG) or DEFAULT_CONFIG
    config, problem = None, None
    if Path(path).is_file():
        from monitor.config import load_config
        from monitor.errors import ConfigurationError

        try:
            config = load_config(path, env=env)
        except ConfigurationError:
            try:
                config = load_config(path, env=_Lenient(env))
            except ConfigurationError as exc:
                problem = f"{path}: " + str(exc).splitlines()[0]
    elif env.get(ENV_CONFIG):
        problem = f"config file {path} not found"
    url = env.get(ENV_DASHBOARD_URL) or env.get(ENV_READ_DATABASE_URL) or env.get(ENV_DATABASE_URL)
    if not url:
        url = config.database_url if config is not None else DEFAULT_DATABASE_URL
    prices = {k: (p.input, p.output) for k, p in config.prices.items()} if config is not None else {}
    targets = {t.id: target_settings(t) for t in config.targets} if config is not None else {}
    if config is None:
        return Settings(url, prices, problem, None, targets)
    from monitor.storage.queries.targets import TargetRef

    refs = tuple(TargetRef(t.id, t.provider, t.model, t.region, t.prompt, t.canonical_model) for t in config.targets)
    return Settings(
        url, prices, problem, config.dashboard_url, targets, config.slos, refs, dict(config.prices), config.maintenance,
        config.status_site.url, config,
    )  # fmt: skip


def password(env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    return env.get(ENV_PASSWORD) or None


def oidc_in_secrets(paths: tuple[Path, ...] | None = None) -> bool:
    """Is OIDC (`[auth]`) in a secrets.toml Streamlit reads (the working directory's, then the user's)?
    Read before Streamlit starts, so `firsttoken dashboard` can tell a protected dashboard from an open one."""
    paths = paths or (Path.cwd() / ".streamlit" / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml")
    for path in paths:
        try:
            if "auth" in tomllib.loads(path.read_text()):
                return True
        except (OSError, tomllib.TOMLDecodeError):
            continue
    return False


def open_to_the_network(host: str, env: Mapping[str, str], oidc: bool) -> bool:
    """Would the SRE pages be served with no sign-in beyond this machine? (The same rule as /mcp's guard.)"""
    return not (oidc or password(env) or is_loopback(host))


def sign_in_problem(host: str, no_sign_in: bool, env: Mapping[str, str] | None = None) -> str | None:
    """Why `--host HOST` must not start (the SRE pages open to the network), or None."""
    env = os.environ if env is None else env
    if no_sign_in or not open_to_the_network(host, env, oidc_in_secrets()):
        return None
    return (
        f"--host {host} would serve every SRE page to the network with no sign-in: set {ENV_PASSWORD}, "
        "configure OIDC ([auth] in .streamlit/secrets.toml), or pass --no-sign-in"
    )
