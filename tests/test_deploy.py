"""The deployment files stay consistent with the code and the docs.

No Docker engine runs here, so docker-compose.yml is checked statically (what is published where, which
service gets which variable) and its services' commands are run the way the containers would run them:
the same arguments, the same environment, the config at the path the volumes put it. The dashboard's
database roles (deploy/postgres-roles.sql) are created by psql on a real PostgreSQL and tried.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
import yaml

from monitor.cli import build_parser
from tests.pg import PG_HOST, PG_PORT, PG_USER

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
ENV_EXAMPLE = ROOT / "deploy" / "firsttoken.env.example"
# The pages that show a remote agent's `docker run`.
AGENT_DOCS = (ROOT / "docs" / "deploy.md", ROOT / "docs" / "howto-sre-example.md")
CONFIG_IN_CONTAINER = "/etc/firsttoken/firsttoken.yaml"
CREDENTIAL = re.compile(r"(_API_KEY|_SECRET|_ROUTING_KEY|_APPRISE_URL|_TOKEN|_PASSWORD)$")


def interpolate(value: str, env: dict[str, str] | None = None) -> str:
    """docker compose's `${VAR:-default}` and `${VAR}` with nothing set but `env`."""
    env = env or {}
    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: env.get(m.group(1)) or (m.group(2) or ""), str(value))


def published(service: str) -> list[str]:
    return [interpolate(p) for p in SERVICES[service].get("ports", [])]


def test_compose_has_the_roles_wired_in_order():
    services = {name for name, s in SERVICES.items() if "profiles" not in s}
    assert services == {"postgres", "migrate", "roles", "monitor", "dashboard"}
    assert SERVICES["migrate"]["command"][:2] == ["db", "upgrade"]
    assert SERVICES["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert SERVICES["roles"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert SERVICES["monitor"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert SERVICES["dashboard"]["depends_on"]["roles"]["condition"] == "service_completed_successfully"


def test_every_compose_command_parses_with_the_real_cli():
    parser = build_parser()
    for name in ("migrate", "monitor", "dashboard"):
        args = parser.parse_args(SERVICES[name]["command"])
        assert args.command in ("db", "run", "dashboard") and args.config == CONFIG_IN_CONTAINER


def test_nothing_is_open_beyond_this_machine_but_the_agent():
    """The dashboard (no password by default), Grafana (anonymous viewers), Prometheus and PostgreSQL
    listen on 127.0.0.1 until widened by hand; only the agent's :9464 (metrics, status site, /mcp
    refused without a token) is published to the network."""
    for name in SERVICES:
        for port in published(name):
            if name == "monitor":
                assert port == "9464:9464"
            else:
                assert port.startswith("127.0.0.1:"), (name, port)
    assert published("postgres") == ["127.0.0.1:5432:5432"]
    assert interpolate(SERVICES["postgres"]["ports"][0], {"POSTGRES_PUBLISH": "0.0.0.0:5432"}) == "0.0.0.0:5432:5432"
    assert SERVICES["dashboard"]["environment"]["FIRSTTOKEN_DASHBOARD_PASSWORD"] == "${FIRSTTOKEN_DASHBOARD_PASSWORD:-}"


def test_credentials_reach_the_probe_agent_only_and_any_name_does():
    """firsttoken.env goes to `monitor` whole (a provider key of any name); no other service names a
    credential, and the compose file carries none (a default password is only for the local network)."""
    assert SERVICES["monitor"]["env_file"] == ["firsttoken.env"]
    for name, service in SERVICES.items():
        env = service.get("environment") or {}
        if name != "monitor":
            assert "env_file" not in service, name
        provider_or_notifier = {k for k in env if CREDENTIAL.search(k) and not k.startswith(("POSTGRES_", "PG"))}
        assert provider_or_notifier <= {"FIRSTTOKEN_DASHBOARD_PASSWORD"}, (name, provider_or_notifier)
    assert "FIRSTTOKEN_DASHBOARD_PASSWORD" not in SERVICES["monitor"]["environment"]


def _env_example_names() -> set[str]:
    return {m.group(1) for m in re.finditer(r"^#?([A-Z][A-Z0-9_]*)=", ENV_EXAMPLE.read_text(), re.M)}


@pytest.mark.parametrize("example", ["openai-anthropic-gemini.yaml", "sre-two-regions.yaml"])
def test_the_env_file_example_names_every_credential_of_the_compose_examples(example):
    from monitor.config import DEFER, load_config

    config = load_config(ROOT / "examples" / example, env={}, secrets=DEFER)
    needed = {name for names in config.unset_secrets.values() for name in names}
    assert needed and needed <= _env_example_names(), needed - _env_example_names()
    assert "FIRSTTOKEN_MCP_TOKEN" in _env_example_names()


def _container(service: str, tmp_path: Path, example: str) -> tuple[Path, dict[str, str]]:
    """The service's filesystem as its volumes make it (README: `cp examples/X firsttoken.yaml`),
    under tmp_path, and the environment it gets: its `environment:`, plus firsttoken.env for `monitor`
    (every line of the example uncommented, with a dummy value)."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    shutil.copy(ROOT / "examples" / example, project / "firsttoken.yaml")
    (project / "prompts").mkdir(exist_ok=True)  # what Docker makes of a missing bind-mount source
    root = tmp_path / service
    for volume in SERVICES[service]["volumes"]:
        source, target, *_ = volume.split(":")
        if source.startswith("./"):
            dest = root / target.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if (project / source).is_dir() else shutil.copy)(project / source, dest)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTTOKEN_") and not CREDENTIAL.search(k)}
    env = {k: v for k, v in env.items() if not k.endswith("_URL")}
    env |= {k: interpolate(v) for k, v in (SERVICES[service].get("environment") or {}).items()}
    if "env_file" in SERVICES[service]:
        env |= {name: f"dummy-{name.lower()}" for name in _env_example_names()}
        env["SLACK_APPRISE_URL"] = "slack://T000/B000/dummydummydummy"
    env["FIRSTTOKEN_DATABASE_URL"] = f"sqlite:///{tmp_path / 'compose.db'}"  # the service's PostgreSQL, here
    env["PYTHONPATH"] = str(ROOT)
    return root, env


def _in_container(root: Path, command: list[str]) -> list[str]:
    return [a.replace(CONFIG_IN_CONTAINER, str(root / CONFIG_IN_CONTAINER.lstrip("/"))) for a in command]


@pytest.mark.parametrize("example", ["openai-anthropic-gemini.yaml", "sre-two-regions.yaml"])
def test_the_migration_loads_the_copied_example_as_its_container_would(example, tmp_path):
    root, env = _container("migrate", tmp_path, example)
    done = subprocess.run(
        [sys.executable, "-m", "monitor", *_in_container(root, SERVICES["migrate"]["command"])],
        capture_output=True, text=True, env=env, cwd=root, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not any(CREDENTIAL.search(k) for k in SERVICES["migrate"].get("environment") or {})


@pytest.mark.parametrize("example", ["openai-anthropic-gemini.yaml", "sre-two-regions.yaml"])
def test_the_probe_agent_finds_every_credential_in_its_env_file(example, tmp_path):
    root, env = _container("monitor", tmp_path, example)
    config = str(root / CONFIG_IN_CONTAINER.lstrip("/"))
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "check-config", "--config", config],
        capture_output=True, text=True, env=env, cwd=root, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "is not set" not in done.stdout and "dummy-" not in done.stdout


def test_dockerfile_copies_what_exists_and_runs_what_compose_mounts():
    dockerfile = (ROOT / "Dockerfile").read_text()
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.M)
    assert cmd and yaml.safe_load(cmd.group(1)) == SERVICES["monitor"]["command"]


def _docker_run_blocks() -> list[list[str]]:
    text = "\n".join(page.read_text() for page in AGENT_DOCS)
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M)
    runs = []
    for block in blocks:
        for command in re.sub(r"\\\n\s*", " ", block).splitlines():
            if command.strip().startswith("docker run"):
                runs.append(shlex.split(command.split("#")[0]))
    return runs


def test_the_documented_remote_agent_gets_what_every_agent_needs():
    """Deploy's second agent: the same credentials (any agent may lead and send the pages), its own name,
    the shared PostgreSQL, the config where the image's CMD reads it, and a spool volume."""
    runs = _docker_run_blocks()
    assert len(runs) >= len(AGENT_DOCS), "a page shows no `docker run` for a remote agent"
    for argv in runs:
        pairs = [(a, argv[i + 1] if i + 1 < len(argv) else "") for i, a in enumerate(argv)]
        assert ("--env-file", "firsttoken.env") in pairs
        env = {v.split("=", 1)[0]: v.split("=", 1)[1] for a, v in pairs if a == "-e"}
        assert env.get("FIRSTTOKEN_AGENT") and env.get("FIRSTTOKEN_DATABASE_URL", "").startswith(
            "postgresql+psycopg://"
        )
        mounts = [v for a, v in pairs if a == "-v"]
        assert any(m.endswith(f":{CONFIG_IN_CONTAINER}:ro") for m in mounts), mounts
        assert any(m.endswith(":/var/lib/firsttoken") for m in mounts), mounts
        assert argv[-1] == SERVICES["monitor"]["image"]


# ------------------------------------------------------------------ the dashboard's database roles
@pytest.fixture
def owned_database():
    """A database owned by a fresh non-superuser role that may create roles (compose's `firsttoken` is the
    container's superuser; less is enough), and the names of the two roles the script makes."""
    try:
        admin = psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname="postgres", autocommit=True)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no PostgreSQL on {PG_HOST}:{PG_PORT}: {exc}")
    tag = uuid.uuid4().hex[:10]
    owner, db = f"ft_owner_{tag}", f"firsttoken_test_{tag}"
    roles = {"reader": f"ft_dash_{tag}", "writer": f"ft_dashw_{tag}"}
    with admin:
        admin.execute(f'CREATE ROLE "{owner}" LOGIN CREATEROLE')
        admin.execute(f'CREATE DATABASE "{db}" OWNER "{owner}"')
        with psycopg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, dbname=db, autocommit=True) as conn:
            conn.execute(f'ALTER SCHEMA public OWNER TO "{owner}"')  # PostgreSQL 15: public is not open to all
        try:
            yield owner, db, roles
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            for role in (*roles.values(), owner):
                admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def _url(user: str, db: str) -> str:
    return f"postgresql+psycopg://{user}@{PG_HOST}:{PG_PORT}/{db}"


def _roles_script(owner: str, db: str, roles: dict[str, str]) -> subprocess.CompletedProcess:
    # psql comes with the PostgreSQL the suite needs anyway: its absence is a broken setup, not a skip
    assert shutil.which("psql"), "psql is not installed (Debian's postgresql-client)"
    argv = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "reader_pw=r-pw", "-v", "writer_pw=w-pw"]
    argv += [arg for name, role in roles.items() for arg in ("-v", f"{name}={role}")]
    env = os.environ | {"PGHOST": PG_HOST, "PGPORT": str(PG_PORT), "PGUSER": owner, "PGDATABASE": db}
    return subprocess.run(
        [*argv, "-f", str(ROOT / "deploy" / "postgres-roles.sql")], capture_output=True, text=True, env=env, timeout=60
    )


def test_the_dashboard_roles_read_and_write_only_what_they_must(owned_database):
    """After `db upgrade`: `dashboard` reads every table and writes none; `dashboard_writer` publishes,
    updates and resolves an incident as the dashboard does (monitor.incidents.store) and can do nothing
    else. The script runs again after a later migration without failing."""
    from sqlalchemy import insert, text

    from monitor.incidents import store
    from monitor.storage import migrate
    from monitor.storage.db import make_engine

    owner, db, roles = owned_database
    engine = make_engine(_url(owner, db))
    migrate.upgrade(engine)
    done = _roles_script(owner, db, roles)
    assert done.returncode == 0, done.stderr
    now = datetime.now(UTC)
    with engine.begin() as conn:  # an incident the leader drafted
        incident_id = conn.execute(
            insert(store.INCIDENTS)
            .values(provider="openai", title="Slow answers", status="draft", state="investigating",
                    components=["openai/*"], started_at=now, created_at=now, updated_at=now)
            .returning(store.INCIDENTS.c.id)
        ).scalar_one()  # fmt: skip
    engine.dispose()

    writer = make_engine(_url(roles["writer"], db))
    with writer.begin() as conn:
        assert store.publish(conn, incident_id, now) == 0
        store.post_update(conn, incident_id, "We are looking into it.", now=now, created_by="dashboard")
        store.resolve(conn, incident_id, now=now, created_by="dashboard")
    for forbidden in ("SELECT count(*) FROM samples", "DELETE FROM incidents", "SELECT count(*) FROM alerts"):
        with pytest.raises(Exception, match="permission denied"), writer.begin() as conn:
            conn.execute(text(forbidden))
    writer.dispose()

    reader = make_engine(_url(roles["reader"], db))
    with reader.begin() as conn:
        assert conn.execute(text("SELECT state FROM incidents")).scalar_one() == "resolved"
        assert conn.execute(text("SELECT count(*) FROM incident_updates")).scalar_one() == 2
        conn.execute(text("SELECT count(*) FROM samples"))
    with pytest.raises(Exception, match="permission denied"), reader.begin() as conn:
        conn.execute(text("UPDATE incidents SET title = 'x'"))
    reader.dispose()

    again = _roles_script(owner, db, roles)  # the next `docker compose up` after an upgrade
    assert again.returncode == 0, again.stderr


def test_the_compose_dashboard_reads_as_dashboard_and_writes_as_dashboard_writer(tmp_path):
    """The dashboard service's environment, as the code reads it: pages on the read-only role, the
    Incidents section's writes on the writer (dashboard/writes.py), never the owner."""
    from dashboard.settings import load_settings
    from dashboard.writes import write_database_url

    env = {k: interpolate(v) for k, v in SERVICES["dashboard"]["environment"].items()}
    env["FIRSTTOKEN_CONFIG"] = str(tmp_path / "absent.yaml")  # the URLs alone decide
    assert load_settings(env).database_url.startswith("postgresql+psycopg://dashboard:")
    assert write_database_url(env).startswith("postgresql+psycopg://dashboard_writer:")
    assert "firsttoken:" not in " ".join(env.values())  # the owner's credentials are not there
