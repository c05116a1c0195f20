"""Load `firsttoken.yaml` into a frozen `Config` (DESIGN §3), or fail with every error at once.

    config = load_config("firsttoken.yaml")          # env defaults to os.environ
    config.targets_for_agent(config.agent)           # the expanded matrix for this agent

Loading is pure apart from reading the file and its prompt files: the YAML is
parsed, `${VAR}` interpolated in string values, the tree validated against the
schema, then the matrix and the references between sections checked. If
anything is wrong, one `ConfigError` carries every problem and nothing starts.
No input raises anything else.

Least privilege: only commands that call providers or notifiers need their
credentials. With `secrets="defer"` (the CLI's choice for every other command,
see `secrets_policy`), a credential whose `${VAR}` is unset is kept as written
and listed in `Config.unset_secrets` instead of failing the load; any other
unset variable is still an error. The default, "resolve", needs them all.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from pydantic import TypeAdapter, ValidationError

from monitor import envvars
from monitor.config.document import parse_yaml
from monitor.config.errors import ConfigError, final_lines, is_secret, path_of, problem
from monitor.config.fields import NAME_HINT, NAME_RE, LoadContext
from monitor.config.inhibit import DEFAULT_INHIBIT
from monitor.config.interpolation import interpolate
from monitor.config.matrix import build_targets
from monitor.config.schema import DEFAULT_DATABASE_URL, SECTIONS, FileSpec, database_problem
from monitor.config.scopes import check_references
from monitor.config.values import Config
from monitor.redact import Secret

MAX_FILE_BYTES = 10_000_000
RESOLVE, DEFER = "resolve", "defer"
_policy: ContextVar[str] = ContextVar("firsttoken_secrets", default=RESOLVE)


@contextmanager
def secrets_policy(mode: str) -> Iterator[None]:
    """Within it, `load_config` without `secrets=` resolves (RESOLVE) or defers (DEFER) credentials."""
    token = _policy.set(mode)
    try:
        yield
    finally:
        _policy.reset(token)


_FILE = TypeAdapter(FileSpec)
_DATABASE_ENV, _AGENT_ENV = envvars.DATABASE_URL, envvars.AGENT


def load_config(path: str | Path, env: Mapping[str, str] | None = None, *, secrets: str | None = None) -> Config:
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
        return _load(text, file.parent, env, file, secrets)
    except ConfigError as exc:
        raise ConfigError(exc.errors, str(path)) from None


def load_config_text(
    text: str, base_dir: str | Path | None = None, env: Mapping[str, str] | None = None, *, secrets: str | None = None
) -> Config:
    """Validate config text; prompt files resolve against `base_dir` (default: the working directory)."""
    return _load(text, Path(base_dir) if base_dir is not None else Path.cwd(), env, None, secrets)


def _load(text: str, base_dir: Path, env: Mapping[str, str] | None, source: Path | None, secrets: str | None) -> Config:
    env = os.environ if env is None else env
    mode = secrets or _policy.get()
    if mode not in (RESOLVE, DEFER):
        raise ValueError(f"secrets must be {RESOLVE!r} or {DEFER!r}, not {mode!r}")
    if not isinstance(text, str):
        raise ConfigError([f"expected text, got {type(text).__name__}"])
    tree = parse_yaml(text)
    if not isinstance(tree, Mapping):
        got = "an empty document" if tree is None else f"a {type(tree).__name__}"
        raise ConfigError([f"top level: expected a mapping of settings (database, providers, checks ...), got {got}"])
    found = interpolate(tree, env, defer=mode == DEFER)
    ctx = LoadContext(secrets=set(found.secrets), base_dir=base_dir)
    ctx.errors += [problem(loc, message, category="interpolation") for loc, message in found.errors]
    tree = dict(found.tree)
    overrides = _overrides(env, ctx)
    for key in overrides:  # an override replaces the file's value, which is then not judged
        tree.pop(key, None)
    spec = _validate(tree, ctx)
    targets = build_targets(spec, tree, ctx)
    check_references(spec, tree, ctx)
    # A deferred variable outside a credential (a URL, the database) is needed by every command.
    for loc, names in found.unset.items():
        if loc not in ctx.deferred:
            found.errors += [(loc, f"environment variable {name} is not set") for name in names]
            ctx.errors += [
                problem(loc, f"environment variable {n} is not set", category="interpolation") for n in names
            ]
    errors = sorted(ctx.errors, key=_file_order(tree))
    lines = final_lines(errors, ctx.secrets, broken={loc for loc, _ in found.errors})
    if lines:
        raise ConfigError(lines)
    database_url = overrides.get("database", spec.database or DEFAULT_DATABASE_URL).strip()
    return Config(
        database_url=Secret(database_url) if is_secret(database_url, ctx.secrets) else database_url,
        agent=overrides.get("agent", spec.agent),
        defaults=spec.defaults,
        prompts=spec.prompts,
        providers=spec.providers,
        checks=tuple(c for c in spec.checks if c),
        targets=targets,
        alerts=tuple(a for a in spec.alerts if a),
        notifiers=tuple(n for n in spec.notifiers if n),
        silences=tuple(s for s in spec.silences if s),
        prices=spec.prices,
        retention=spec.retention,
        alerting=spec.alerting,
        dashboard_url=spec.dashboard_url,
        public_url=spec.public_url,
        budget=spec.budget,
        slos=tuple(s for s in spec.slos if s),
        inhibit=tuple(i for i in spec.inhibit if i) if "inhibit" in tree else DEFAULT_INHIBIT,
        status_site=spec.status_site,
        smtp=spec.smtp,
        maintenance=tuple(m for m in spec.maintenance if m),
        reports=tuple(r for r in spec.reports if r),
        secrets=frozenset(s for s in ctx.secrets if s),
        source_path=source,
        unset_secrets=MappingProxyType({path_of(loc): found.unset[loc] for loc in found.unset if loc in ctx.deferred}),
    )


def _file_order(tree: Mapping[str, Any]) -> Any:
    """Errors in the order of the file's sections and entries (the schema's checks come first within an
    entry, then the references): whoever reads them top to bottom fixes the file top to bottom."""
    rank = {section: n for n, section in enumerate(SECTIONS)}
    position = {}
    for section, value in tree.items():
        if isinstance(value, Mapping | list):
            position.update(
                {(section, key): n for n, key in enumerate(value if isinstance(value, Mapping) else range(len(value)))}
            )

    def key(error: Mapping[str, Any]) -> tuple[int, int]:
        loc = error.get("order") or error["loc"]  # a matrix error sorts with the check that produced it
        return (rank.get(loc[0], -1), position.get(tuple(loc[:2]), -1)) if loc else (-1, -1)

    return key


def _validate(tree: dict[str, Any], ctx: LoadContext) -> FileSpec:
    """The file against the schema. A broken section is reported, then left out (its defaults stand
    in) so the matrix and the references are still checked; entries are left out one by one."""
    for _ in range(3):
        try:
            return _FILE.validate_python(tree, context=ctx)
        except ValidationError as exc:
            ctx.errors += exc.errors()
            broken = {e["loc"][0] for e in exc.errors() if e["loc"]}
            tree = {k: v for k, v in tree.items() if k not in broken}
    return FileSpec()


def _overrides(env: Mapping[str, str], ctx: LoadContext) -> dict[str, str]:
    """FIRSTTOKEN_DATABASE_URL and FIRSTTOKEN_AGENT, checked like the file's values."""
    out: dict[str, str] = {}
    url, agent = env.get(_DATABASE_ENV), env.get(_AGENT_ENV)
    if url:
        with contextlib.suppress(ValueError):  # the problem below says it
            ctx.secrets.add(urlsplit(url.strip()).password or "")
        found = database_problem(url)
        if found:
            ctx.errors.append(problem((), f"{_DATABASE_ENV} (environment): {found}", url))
        out["database"] = DEFAULT_DATABASE_URL if found else url
    if agent:
        if not NAME_RE.fullmatch(agent):
            ctx.errors.append(problem((), f"{_AGENT_ENV} (environment): invalid agent name: {NAME_HINT}"))
        out["agent"] = agent if NAME_RE.fullmatch(agent) else "local"
    return out
