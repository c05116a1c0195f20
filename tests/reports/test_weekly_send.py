"""`report weekly` written and mailed, and the leader's `reports` job: one mail per entry and week, to a
real SMTP server (tests/mailserver.py), even with two leaders racing or one dying mid-send; SQLite
and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import threading
from datetime import timedelta

import pytest
from sqlalchemy import update

from monitor.cli import main
from monitor.reports import runs
from monitor.reports.deliver import ReportSender
from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.mailserver import MailServer
from tests.net import free_port
from tests.reports import weekly_seed as seed

DUE = seed.W48_END + timedelta(hours=9)  # MON 09:00 Europe/Berlin after W48: Monday 30 Nov 08:00 UTC


def _sections(server_port: int) -> dict:
    return {
        "smtp": {"host": "127.0.0.1", "port": server_port, "starttls": False, "from": "reports@example.com"},
        "reports": [
            {"name": "weekly", "to": ["pm@example.com", "lead@example.com"], "every": "MON 09:00",
             "timezone": "Europe/Berlin", "providers": ["alpha", "beta"]},
        ],
    }  # fmt: skip


def _images(message) -> list:
    return [part for part in message.walk() if part.get_content_type() == "image/png"]


@pytest.fixture
def site(tmp_path):
    """A SQLite database with the two planted weeks, and a config file naming it and the mail server."""
    url = f"sqlite:///{tmp_path / 'weekly.db'}"
    engine = make_engine(url)
    migrate.upgrade(engine)
    with MailServer() as server:
        seed.plant(engine, seed.config(tmp_path))
        path = tmp_path / "firsttoken.yaml"
        path.write_text(json.dumps({"database": url, **seed.spec(**_sections(server.port))}))
        yield path, server
    engine.dispose()


def test_report_weekly_send_delivers_one_html_mail_with_a_chart_per_provider(site, capsys):
    path, server = site
    code = main(["report", "weekly", "--config", str(path), "--week", "2026-W48", "--report", "weekly", "--send"])
    assert code == 0, capsys.readouterr().err
    (mail,) = server.wait_for(1)
    assert sorted(mail.recipients) == ["lead@example.com", "pm@example.com"]
    assert mail.message["Subject"] == "Weekly LLM provider report 2026-W48: worse: alpha"
    html, text = mail.html(), mail.text()
    charts = _images(mail.message)
    assert len(charts) == 2 and all(part.get_content().startswith(b"\x89PNG") for part in charts)
    for part in charts:  # each chart is shown in the HTML by its Content-ID
        assert f'src="cid:{part["Content-ID"].strip("<>")}"' in html
    assert "alpha" in text and "worse" in text and "2026-W48" in text
    assert "alpha: errors" not in html  # no incident was planted here
    assert "sent the weekly report 2026-W48 (weekly) to 2 recipient(s)" in capsys.readouterr().out
    assert len(server.received) == 1


def test_report_weekly_writes_html_and_a_pdf_with_the_same_figures(site, tmp_path, capsys):
    path, server = site
    assert main(["report", "weekly", "--config", str(path), "--week", "2026-W48", "--report", "weekly"]) == 0
    html = capsys.readouterr().out
    assert html.startswith("<!DOCTYPE html>") and html.count("data:image/png;base64,") == 2
    pdf = tmp_path / "weekly.pdf"
    args = ["report", "weekly", "--config", str(path), "--week", "2026-W48", "--report", "weekly"]
    assert main([*args, "--format", "pdf", "-o", str(pdf)]) == 0
    assert pdf.read_bytes().startswith(b"%PDF")
    words = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    assert "2026-W48" in words and "98.21%" in words  # alpha's uptime: 1 - 6/336
    assert server.received == []  # nothing mailed without --send


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--week", "2026-48"], "--week: expected an ISO week like 2026-W48"),
        (["--format", "pdf"], "a PDF needs -o FILE"),
        (["--report", "nope"], "no reports: entry named 'nope'"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(site, capsys, extra, message):
    path, _server = site
    assert main(["report", "weekly", "--config", str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ the leader's job


@pytest.fixture
def leader(db, tmp_path):
    """(engine, config, mail server, a sender factory): the planted weeks in `db`, one `reports:` entry."""
    with MailServer() as server:
        config = seed.config(tmp_path, **_sections(server.port))
        seed.plant(db, config)

        def sender(at, holder: str) -> ReportSender:
            return ReportSender(clock=lambda: at, holder=holder)

        yield db, config, server, sender


def _run_of(engine):
    with engine.connect() as conn:
        (view,) = runs.runs(conn, "weekly")
    return view


def test_two_leaders_racing_send_the_week_once_and_never_again(leader):
    engine, config, server, sender = leader
    # A minute before W48 is due, the week owed is W47 (never sent here): a first leader sends it.
    (early,) = sender(DUE - timedelta(minutes=1), "first")(engine, config)
    assert (early.period, early.status) == ("2026-W47", "sent")
    server.wait_for(1)
    outcomes, barrier = [], threading.Barrier(2)

    def race(holder: str) -> None:
        job = sender(DUE + timedelta(seconds=30), holder)
        barrier.wait()
        outcomes.extend(job(engine, config))

    threads = [threading.Thread(target=race, args=(h,)) for h in ("leader-a", "leader-b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [(o.period, o.status) for o in outcomes] == [("2026-W48", "sent")]
    _, mail = server.wait_for(2)
    assert "2026-W48" in mail.message["Subject"]
    assert mail.message["Message-ID"] == "<weekly-report.weekly.2026-W48@example.com>"
    # Every minute after, on either leader: nothing more (the job runs every 60 s all week).
    for minutes in (1, 2, 60, 24 * 60, 6 * 24 * 60):
        assert sender(DUE + timedelta(minutes=minutes), "leader-b")(engine, config) == []
    with engine.connect() as conn:
        done = runs.runs(conn, "weekly")
    assert [(r.period, r.status, r.attempts, r.recipients) for r in done] == [
        ("2026-W48", "sent", 1, 2), ("2026-W47", "sent", 1, 2),
    ]  # fmt: skip
    assert len(server.received) == 2


def test_a_leader_that_died_holding_the_claim_is_replaced_after_the_lease_with_the_same_message_id(leader):
    engine, config, server, sender = leader
    assert runs.claim(engine, "weekly", "2026-W48", "dead-leader", DUE) is not None  # then it died
    assert sender(DUE + timedelta(minutes=5), "new-leader")(engine, config) == []  # its lease still runs
    assert server.received == []
    after = DUE + timedelta(seconds=runs.LEASE_S + 1)
    (outcome,) = sender(after, "new-leader")(engine, config)
    assert outcome.status == "sent"
    (mail,) = server.wait_for(1)
    assert mail.message["Message-ID"] == "<weekly-report.weekly.2026-W48@example.com>"
    run = _run_of(engine)
    assert (run.status, run.attempts, run.holder) == ("sent", 2, "new-leader")


def test_a_mail_server_that_is_down_is_tried_again_later_and_the_report_goes_once(leader, tmp_path):
    engine, config, server, sender = leader
    port = free_port()  # nothing listens there
    broken = seed.config(tmp_path, **_sections(port))
    (outcome,) = sender(DUE, "leader-a")(engine, broken)
    assert outcome.status == "pending"
    run = _run_of(engine)
    assert run.status == "pending" and f"127.0.0.1:{port}" in run.last_error
    assert run.lease_until == DUE + timedelta(seconds=runs.retry_delay_s(1))
    assert sender(DUE + timedelta(seconds=30), "leader-a")(engine, config) == []  # not before its retry time
    (outcome,) = sender(run.lease_until, "leader-a")(engine, config)
    assert outcome.status == "sent"
    server.wait_for(1)
    assert _run_of(engine).attempts == 2 and len(server.received) == 1


def test_a_claim_whose_lease_passed_cannot_mark_the_row_sent(leader):
    engine, _config, _server, _sender = leader
    first = runs.claim(engine, "weekly", "2026-W48", "slow", DUE)
    second = runs.claim(engine, "weekly", "2026-W48", "fresh", DUE + timedelta(seconds=runs.LEASE_S))
    assert first is not None and second is not None and second.attempts == 2
    assert not runs.mark_sent(engine, first, DUE, recipients=1, message_id="<x@y>")
    assert runs.mark_sent(engine, second, DUE, recipients=1, message_id="<x@y>")
    with engine.begin() as conn:  # a sent row is never claimed again, even with its lease long gone
        conn.execute(update(runs.RUNS).values(lease_until=DUE - timedelta(days=1)))
    assert runs.claim(engine, "weekly", "2026-W48", "late", DUE + timedelta(days=3)) is None
