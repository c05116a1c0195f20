"""Distinctive secrets everywhere a config can hold one; every path that could
echo them is driven; none of them may appear in anything a person or a
database can read.

The secrets are deliberately unlike any credential pattern (no `sk-`, no
`key=`), so only the exact-value redaction can catch them: the pattern layer
of monitor/redact.py must not get the credit. Each source of output is one
test case, so a leak names the path it took.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
from sqlalchemy import inspect, text

from monitor.protocols import protocol_names
from monitor.storage.db import make_engine
from tests.alerts.receiver import Receiver
from tests.conftest import BASE_PATH
from tests.faults.harness import ServiceProcess, cli, wait_for
from tests.mailserver import MailServer
from tests.pg import PG_HOST, PG_PORT, PG_USER

pytestmark = [pytest.mark.postgres, pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")]

SECRETS = {
    "FT_API_KEY": "QUOKKA9apikey5517a9",
    "FT_HEADER_VALUE": "WOMBAT7header8812b4",
    "FT_WEBHOOK_SECRET": "NUMBAT3webhook3341c7",
    "FT_ROUTING_KEY": "BILBY5routing9920d1",
    "FT_APPRISE_TOKEN": "DINGO2apprise6671e2",
    "FT_DB_PASSWORD": "POTOROO8dbpass4410f8",
    "FT_SLACK_TOKEN": "QUOLL4slackhook7731f0",
    "FT_SLACK_BOT": "xoxb-BANDICOOT6bot2290a4",
    "FT_TEAMS_SIG": "WALLABY1teamssig5508b9",
    "FT_SMTP_PASSWORD": "BETTONG3smtppass6120c3",
}
SOURCES: dict[str, str] = {}  # what was read back, by where it came from; filled by the `outputs` fixture


def config_tree(simulator, receiver_url: str, database: str, smtp_port: int = 25) -> dict:
    providers = {
        protocol: {
            "protocol": protocol,
            "api_key": "${FT_API_KEY}",
            "headers": {"x-extra-auth": "${FT_HEADER_VALUE}"},
            "regions": {"local": simulator.base_url + BASE_PATH[protocol]},
            # echo_key answers 401 with the key quoted in the body.
            "models": ["sim:fault=echo_key", "sim:ttft=5:itl=1:tokens=4"],
        }
        for protocol in protocol_names()
    }
    return {
        "database": database,
        "agent": "secrets",
        "defaults": {"interval": "1s", "timeout": "5s", "ttft_timeout": "3s"},
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}},
        "providers": providers,
        "checks": [{"providers": sorted(providers), "prompts": ["short"]}],
        "alerts": [
            {
                "name": "errors",
                "metric": "error_rate",
                "kind": "threshold",
                "above": "20%",
                "window": "1m",
                "severity": "page",
                "for_evaluations": 1,
            },
        ],
        "notifiers": [
            {"name": "hooks", "type": "webhook", "url": receiver_url + "/webhook", "secret": "${FT_WEBHOOK_SECRET}"},
            {"name": "oncall", "type": "pagerduty", "routing_key": "${FT_ROUTING_KEY}", "url": receiver_url + "/pd"},
            {"name": "chat", "type": "apprise", "urls": [f"json://{receiver_url[7:]}/apprise/${{FT_APPRISE_TOKEN}}"]},
            # DESIGN §18: the webhook URL and the Workflows signature are credentials, so are the bot token
            # (the recorder's answer is no Web API answer: its sends fail, and their errors are read too)
            # and the SMTP password.
            {"name": "slack", "type": "slack", "url": receiver_url + "/slack/${FT_SLACK_TOKEN}"},
            {
                "name": "slack-bot",
                "type": "slack",
                "token": "${FT_SLACK_BOT}",
                "channel": "#oncall",
                "api_url": receiver_url + "/slackapi",
            },
            {"name": "teams", "type": "teams", "url": receiver_url + "/teams?sig=${FT_TEAMS_SIG}"},
            {"name": "mail", "type": "email", "to": ["oncall@example.com"]},
        ],
        "smtp": {
            "host": "127.0.0.1",
            "port": smtp_port,
            "starttls": False,
            "username": "firsttoken",
            "password": "${FT_SMTP_PASSWORD}",
            "from": "firsttoken@example.com",
        },
        "public_url": "http://127.0.0.1:9464",
        # Rounds every second, no minute-long grouping hold: the first pages go out in seconds, not ~90 s.
        "alerting": {"evaluate_every": "1s", "deliver_every": "1s", "settle": "1s", "group_wait": "2s"},
    }


def db_url(name: str, driver: str = "postgresql+psycopg") -> str:
    return f"{driver}://{PG_USER}:{SECRETS['FT_DB_PASSWORD']}@{PG_HOST}:{PG_PORT}/{name}"


def dump_database(url: str) -> str:
    """Every row of every table (partitions included), as text."""
    engine = make_engine(url)
    out = []
    try:
        with engine.connect() as conn:
            for table in inspect(conn).get_table_names():
                rows = conn.execute(text(f'SELECT * FROM "{table}"')).all()
                out.append(f"{table}: {rows!r}")
    finally:
        engine.dispose()
    return "\n".join(out)


def run_cli(name: str, *args: str, env: dict, expect: int | None = 0) -> None:
    result = cli(*args, env=env, timeout_s=120)
    SOURCES[name] = result.stdout + result.stderr
    if expect is not None:
        assert result.returncode == expect, (name, result.returncode, result.stderr[-2000:])


def dashboard_text(url: str, config: Path, env: dict) -> str:
    """Every element of every dashboard page, rendered by Streamlit's AppTest."""
    from streamlit.testing.v1 import AppTest

    from tests.dashboard.conftest import APP, _clear_caches

    saved = dict(os.environ)
    os.environ.update(env)
    os.environ.update({"FIRSTTOKEN_DASHBOARD_DATABASE_URL": url, "FIRSTTOKEN_CONFIG": str(config)})
    os.environ.pop("FIRSTTOKEN_DASHBOARD_PASSWORD", None)
    texts = []
    try:
        _clear_caches()
        at = AppTest.from_file(APP, default_timeout=120).run()
        pages = sorted(p.name for p in (Path(APP).parent / "pages").glob("*.py") if p.stem != "login")
        for page in [None, *pages]:
            if page is not None:
                at.switch_page(f"pages/{page}").run()
            texts.append(str(at._tree))
            texts += [str(e.proto) for e in at.exception]
    finally:
        os.environ.clear()
        os.environ.update(saved)
        _clear_caches()
    return "\n".join(texts)


@pytest.fixture(scope="module")
def outputs(simulator, pg_server, tmp_path_factory):
    """Drive every path once; SOURCES holds what each one produced."""
    tmp = tmp_path_factory.mktemp("secrets")
    name = pg_server.create_database()
    env = dict(SECRETS)
    with Receiver() as receiver, MailServer(login=("firsttoken", SECRETS["FT_SMTP_PASSWORD"])) as mail:
        tree = config_tree(
            simulator, receiver.url, db_url(name).replace(SECRETS["FT_DB_PASSWORD"], "${FT_DB_PASSWORD}"), mail.port
        )
        config = tmp / "firsttoken.yaml"
        config.write_text(json.dumps(tree, indent=1))
        assert not any(s in config.read_text() for s in SECRETS.values())  # secrets live in the environment
        base = ("--config", str(config))

        run_cli("check-config", "check-config", *base, env=env)
        run_cli("check-config --debug", "check-config", "--debug", *base, env=env)
        # A secret where it is wrong: each error line must still mask it.
        broken = json.loads(json.dumps(tree))
        broken["prompts"]["short"]["max_tokens"] = "${FT_API_KEY}"
        broken["providers"]["openai-chat"]["regions"]["local"] = "${FT_HEADER_VALUE}"
        broken["notifiers"][0]["url"] = "${FT_WEBHOOK_SECRET}"
        (tmp / "broken.yaml").write_text(json.dumps(broken))
        run_cli("config errors", "check-config", "--config", str(tmp / "broken.yaml"), env=env, expect=2)
        run_cli("run refused: unmigrated", "run", *base, env=env, expect=1)
        run_cli("db upgrade", "db", "upgrade", *base, env=env)
        run_cli("db current", "db", "current", *base, env=env)
        svc = ServiceProcess(config, tmp, args=("--debug", "--spool-dir", str(tmp / "spool")), env=env)
        try:
            # While the service runs up to its first alert, the other commands.
            gone = {**env, "FIRSTTOKEN_DATABASE_URL": db_url("firsttoken_no_such_db")}
            run_cli("samples: database missing", "samples", *base, env=gone, expect=None)
            run_cli("samples --debug: database missing", "samples", "--debug", *base, env=gone, expect=None)
            run_cli("run: database missing", "run", *base, env=gone, expect=1)
            run_cli("probe", "probe", *base, env=env, expect=None)
            run_cli(
                "probe --json --debug --store", "probe", "--json", "--debug", "--store", *base, env=env, expect=None
            )
            # The alert fires on the echo_key targets' errors; its notifications go out.
            wait_for(lambda: len(receiver.requests) >= 3, 150, "webhook, pagerduty and apprise deliveries")
            wait_for(lambda: len(mail.received) >= 1, 60, "the email notifier's mail")
            run_cli("notify test", "notify", "test", *base, env=env, expect=None)  # the bot's send fails
            pg_server.set_allow_connections(name, False)  # samples go to the spool file
            try:
                spool = tmp / "spool"
                wait_for(lambda: any(p.stat().st_size for p in spool.glob("*.jsonl")), 30, "a spooled sample")
                SOURCES["spool files"] = "\n".join(
                    p.read_text(errors="replace") for p in spool.iterdir() if p.is_file()
                )
                SOURCES["/healthz (database down)"] = json.dumps(svc.health())
            finally:
                pg_server.set_allow_connections(name, True)
            wait_for(lambda: (h := svc.health()) and h["spool_bytes"] == 0, 60, "the spool to drain")
            # A reload that fails on a secret value is refused, and says so without it.
            config.write_text(json.dumps(broken))
            wait_for(lambda: "config reload refused" in svc.log(), 20, "the refused reload")
            config.write_text(json.dumps(tree))
            SOURCES["/metrics"] = svc.metrics()
            SOURCES["/healthz"] = json.dumps(svc.health())
            public = ["/status.json", "/incidents.atom", *(f"/badge/{p}.svg" for p in tree["providers"])]
            public += ["/status", *(f"/status/{p}" for p in tree["providers"])]  # the HTML status site
            SOURCES["public status"] = "\n".join(httpx.get(svc.url(path), timeout=10).text for path in public)
            run_cli("samples --json", "samples", "--json", "--since", "1h", *base, env=env)
            run_cli("samples --csv", "samples", "--csv", "--since", "1h", *base, env=env)
            run_cli("samples", "samples", "--since", "1h", *base, env=env)
            SOURCES["dashboard pages"] = dashboard_text(db_url(name), config, env)
        finally:
            svc.stop()
        SOURCES["run --debug log"] = svc.log()
        # PagerDuty's API takes the routing key in the body, and an apprise URL's
        # token is its path: both are meant to reach their receiver.
        SOURCES["webhook and apprise requests"] = "\n".join(
            repr((r.headers, r.raw)) + (r.path if r.path.startswith("/webhook") else "/apprise/")
            for r in receiver.requests
            if not r.path.startswith(("/pd", "/slackapi"))  # the bot token is the Web API's Authorization
        )
        SOURCES["mail received"] = "\n".join(r.message.as_string() for r in mail.received)
    SOURCES["database rows"] = dump_database(db_url(name))
    return SOURCES


EXPECTED_SOURCES = [
    "check-config", "check-config --debug", "config errors", "run refused: unmigrated", "db upgrade",
    "db current", "samples: database missing", "samples --debug: database missing", "run: database missing",
    "probe", "probe --json --debug --store", "spool files", "/healthz (database down)", "/metrics", "/healthz",
    "public status", "run --debug log", "webhook and apprise requests", "samples --json", "samples --csv", "samples",
    "database rows", "dashboard pages", "mail received", "notify test",
]  # fmt: skip


@pytest.mark.parametrize("source", EXPECTED_SOURCES)
def test_no_secret_in(outputs, source):
    assert source in outputs, f"{source} was not produced"
    # A prefix too: a truncated message must not keep half a key.
    found = {var for var, value in SECRETS.items() if value[:10] in outputs[source]}
    assert not found, f"{source} leaks {sorted(found)}"


def test_the_paths_were_really_exercised(outputs):
    # Each check above is only worth something if the path ran: the key was
    # echoed, errors quoted, alerts delivered, samples spooled and stored.
    assert outputs["probe --json --debug --store"].count('"error_kind":"auth"') == len(protocol_names())
    assert "***" in outputs["probe --json --debug --store"]
    assert outputs["config errors"].count("\n") >= 3
    assert '"error_kind":"auth"' in outputs["spool files"]
    assert "firsttoken_probes_total" in outputs["/metrics"]
    assert '"components"' in outputs["public status"] and "<svg" in outputs["public status"]
    assert "config reload refused" in outputs["run --debug log"]
    assert "DEBUG" in outputs["run --debug log"]
    assert "/webhook" in outputs["webhook and apprise requests"]
    assert "/apprise/" in outputs["webhook and apprise requests"]
    assert (
        '"blocks"' in outputs["webhook and apprise requests"]
        and "AdaptiveCard" in outputs["webhook and apprise requests"]
    )
    assert (
        "multipart/related" in outputs["mail received"] and "FAILED: slack chat.postMessage" in outputs["notify test"]
    )
    assert "echo_key" in outputs["samples --csv"] and "echo_key" in outputs["database rows"]
