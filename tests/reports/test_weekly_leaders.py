"""Two `firsttoken run` agents on one PostgreSQL with a `reports:` entry: the leader mails the week it
owes once; when that leader is killed, the survivor takes the lease, runs its leader jobs at once
(the `reports` job among them) and mails nothing more. A real SMTP server (tests/mailserver.py)."""

from __future__ import annotations

import os
import signal
import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
import yaml
from sqlalchemy import text

from monitor.reports.schedule import last_whole_week
from monitor.storage.db import make_engine
from tests.alerts.service_proc import ServiceProcess
from tests.mailserver import MailServer

pytestmark = [pytest.mark.postgres, pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(300)]


def _config(url: str, agent: str, port: int) -> dict:
    return {
        "database": url,
        "agent": agent,
        "providers": {"acme": {"protocol": "openai-chat", "api_key": "sk-test", "regions": {"r1": "http://127.0.0.1:9/v1"}, "models": ["m"]}},
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
        "defaults": {"interval": "1m"},
        "checks": [{"providers": ["acme"], "prompts": ["short"]}],
        "smtp": {"host": "127.0.0.1", "port": port, "starttls": False, "from": "reports@example.com"},
        # MON 00:00 UTC: the last whole week is always owed, whatever day the test runs.
        "reports": [{"name": "weekly", "to": ["pm@example.com"], "every": "MON 00:00", "timezone": "UTC"}],
    }  # fmt: skip


def _wait(condition, timeout_s: float, what: str, logs=()):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"{what} within {timeout_s:g}s\n" + "\n".join(p.log()[-3000:] for p in logs))


def test_the_week_is_mailed_once_and_not_again_by_the_next_leader(pg_server, tmp_path):
    url = pg_server.migrated_url()
    engine = make_engine(url)
    agents = []
    with MailServer() as server:
        try:
            for name in ("agent-a", "agent-b"):
                folder = tmp_path / name
                folder.mkdir()
                path = folder / "firsttoken.yaml"
                path.write_text(yaml.safe_dump(_config(url, name, server.port)))
                agents.append(ServiceProcess(path, folder))
            for agent in agents:
                agent.start()
            (mail,) = server.wait_for(1, timeout_s=90)
            week = last_whole_week(datetime.now(UTC), ZoneInfo("UTC"))
            assert week.label in mail.message["Subject"]
            with engine.connect() as conn:
                run = conn.execute(text("SELECT period, status, attempts, holder FROM report_runs")).one()
                leader = conn.execute(text("SELECT holder FROM leader_lease")).scalar_one()
            assert (run.period, run.status, run.attempts) == (week.label, "sent", 1)
            (dead,) = [a for a in agents if f"/{a.process.pid}/" in leader]
            (survivor,) = [a for a in agents if a is not dead]
            assert f"/{dead.process.pid}/" in run.holder  # the leader's reports job sent it
            os.kill(dead.process.pid, signal.SIGKILL)  # no release: the lease has to run out
            dead.process.wait()

            def led_by_survivor():
                with engine.connect() as conn:
                    holder = conn.execute(text("SELECT holder FROM leader_lease")).scalar_one()
                return f"/{survivor.process.pid}/" in holder

            _wait(led_by_survivor, 60, "the survivor leads", agents)
            time.sleep(10)  # its leader jobs run at once on taking over; the reports job is the last of them
            assert len(server.received) == 1, [m.message["Subject"] for m in server.received]
            with engine.connect() as conn:
                assert conn.execute(text("SELECT count(*) FROM report_runs")).scalar_one() == 1
        finally:
            for agent in agents:
                if agent.alive():
                    agent.stop()
    engine.dispose()
