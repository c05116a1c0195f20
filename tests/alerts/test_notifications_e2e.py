"""End to end (DESIGN §18): a real latency regression on the simulator, paged to Slack, Teams and email.

`firsttoken run` probes the simulator; one model's TTFT doubles; the regression rule fires. A
recorder on loopback stands in for Slack's incoming webhook and Teams' Workflows, a real SMTP
server (aiosmtpd, with a login) for the mail server. Each gets the page: Block Kit with the chart's
signed URL and the three links, an Adaptive Card 1.5 wrapped as Workflows expects, a multipart mail
with the PNG inline. The chart URL, fetched from the service's listen address (its `public_url`),
is a PNG of the regression; altered, refused. `firsttoken notify test` sends the sample alert
through the same three while the service runs, and its chart link is answered too. No webhook URL,
token or SMTP password reaches the log or the outbox.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import uuid
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from PIL import Image, ImageStat

from monitor.storage.models import NotificationOutbox
from tests.mailserver import MailServer
from tests.net import free_port

from .receiver import Receiver
from .service_proc import ROOT, ServiceProcess
from .test_e2e import BEHAVIOUR, REGRESSION_RULE, rows, seed_history, sqlite_database, write_config

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")]

SLACK_TOKEN = "E2Eslackhook-33f1a9c0"
TEAMS_SIG = "E2Eteamssig-7c2d55e1"
SMTP_PASSWORD = "E2Esmtppass-90b1d4"
RUNBOOK = "https://runbooks.example/ttft"


def png_ok(content: bytes) -> bool:
    image = Image.open(io.BytesIO(content))
    (width, height), spread = image.size, max(ImageStat.Stat(image.convert("RGB")).stddev)
    return image.format == "PNG" and width >= 400 and height >= 200 and spread > 20


def altered(url: str) -> str:
    sig = parse_qs(urlsplit(url).query)["sig"][0]
    return url.replace(sig, ("B" if sig[0] == "A" else "A") + sig[1:])


def pages(received) -> list[dict]:
    return [r.json() for r in received if r.status < 300]


@pytest.fixture(scope="module")
def run(simulator, tmp_path_factory):
    tag = uuid.uuid4().hex[:6]
    model = f"e2e-{tag}-notify"
    simulator.set_model(model, ttft_ms=100, **BEHAVIOUR)
    target = f"reg-n/{model}@local:short"
    workdir = tmp_path_factory.mktemp("notify")
    url, engine = sqlite_database(workdir)
    seed_history(engine, target, 100)
    port = free_port()
    with Receiver() as slack, Receiver(ok_status=202) as teams, MailServer(login=("firsttoken", SMTP_PASSWORD)) as mail:
        notifiers = [
            {"name": "oncall-slack", "type": "slack", "url": f"{slack.url}/services/T0/B0/${{E2E_SLACK_TOKEN}}"},
            {"name": "oncall-teams", "type": "teams", "url": f"{teams.url}/workflows/invoke?sig=${{E2E_TEAMS_SIG}}"},
            {"name": "oncall-mail", "type": "email", "to": ["oncall@example.com"]},
        ]
        rule = {**REGRESSION_RULE, "runbook": RUNBOOK}
        config = write_config(
            workdir / "firsttoken.yaml", url, {"reg-n": [model]}, [rule], notifiers, simulator.base_url
        )
        spec = json.loads(config.read_text())
        spec["public_url"] = f"http://127.0.0.1:{port}"
        spec["dashboard_url"] = "http://dashboard.example:8501"
        spec["smtp"] = {"host": "127.0.0.1", "port": mail.port, "starttls": False, "username": "firsttoken",
                        "password": "${E2E_SMTP_PASSWORD}", "from": "firsttoken@example.com"}  # fmt: skip
        config.write_text(json.dumps(spec))
        env = {"E2E_SLACK_TOKEN": SLACK_TOKEN, "E2E_TEAMS_SIG": TEAMS_SIG, "E2E_SMTP_PASSWORD": SMTP_PASSWORD}
        with ServiceProcess(config, workdir, env=env, listen=f"127.0.0.1:{port}") as service:
            time.sleep(3)
            simulator.set_model(model, ttft_ms=200)
            fired = slack.wait_for(lambda r: bool(pages(r.requests)), 60) and teams.wait_for(
                lambda r: bool(pages(r.requests)), 20
            )
            mails = mail.wait_for(1, 20) if fired else []
            assert fired, f"no page:\n{service.log()[-6000:]}"
            out: dict = {"slack": pages(slack.requests), "teams": pages(teams.requests), "mails": mails}
            page = out["slack"][0]
            chart_url = next(b for b in page["blocks"] if b["type"] == "image")["image_url"]
            out["chart"] = httpx.get(chart_url, timeout=30)
            out["chart_altered"] = httpx.get(altered(chart_url), timeout=10)
            out["chart_url"] = chart_url
            # `notify test` while the service runs: the sample through the same three, its chart served.
            before = len(slack.requests), len(teams.requests)
            result = subprocess.run(
                [sys.executable, "-m", "monitor", "notify", "test", "--config", str(config)],
                cwd=ROOT, env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                timeout=120,
            )  # fmt: skip
            out["notify"] = result
            out["sample_slack"] = pages(slack.requests[before[0] :])
            out["sample_teams"] = pages(teams.requests[before[1] :])
            out["sample_mail"] = mail.wait_for(2, 20)[1]
            sample_chart = next(b for b in out["sample_slack"][0]["blocks"] if b["type"] == "image")["image_url"]
            out["sample_chart"] = httpx.get(sample_chart, timeout=30)
            simulator.set_model(model, ttft_ms=100)
        out["log"] = service.log()
        out["outbox"] = json.dumps([dict(r) for r in rows(engine, NotificationOutbox)], default=str)
        out["public_url"] = spec["public_url"]
    engine.dispose()
    return out


def test_slack_gets_block_kit_with_the_signed_chart_and_three_links(run):
    page = run["slack"][0]
    kinds = [b["type"] for b in page["blocks"]]
    assert kinds == ["header", "section", "section", "image", "actions", "context"]
    assert page["blocks"][0]["text"]["text"].startswith("PAGE · ttft-regression firing on reg-n/")
    assert run["chart_url"].startswith(f"{run['public_url']}/alerts/") and "/chart.png?exp=" in run["chart_url"]
    dashboard, silence, runbook = (b["url"] for b in page["blocks"][4]["elements"])
    assert dashboard.startswith("http://dashboard.example:8501/target?target=reg-n%2F")
    assert silence.startswith(f"{run['public_url']}/alerts/") and "/silence?exp=" in silence
    assert runbook == RUNBOOK


def test_the_chart_url_answers_a_png_and_refuses_an_altered_signature(run):
    assert run["chart"].status_code == 200 and run["chart"].headers["content-type"] == "image/png"
    assert png_ok(run["chart"].content)
    assert run["chart_altered"].status_code == 403


def test_teams_gets_an_adaptive_card_1_5_as_workflows_expects(run):
    (message,) = run["teams"][:1]
    assert message["type"] == "message"
    (attachment,) = message["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.5"
    image = next(e for e in card["body"] if e["type"] == "Image")
    assert image["url"].split("?")[0] == run["chart_url"].split("?")[0]
    assert [a["title"] for a in card["actions"]] == ["Open in dashboard", "Silence 1 h", "Runbook"]


def test_the_mail_is_multipart_with_the_chart_inline(run):
    mail = run["mails"][0].message
    assert mail["Subject"].startswith("PAGE · ttft-regression firing on reg-n/")
    assert mail.get_content_type() == "multipart/alternative"
    (image,) = [p for p in mail.walk() if p.get_content_type() == "image/png"]
    assert image["Content-ID"] == "<chart>" and png_ok(image.get_content())
    assert 'src="cid:chart"' in mail.get_body(("html",)).get_content()
    assert RUNBOOK in mail.get_body(("plain",)).get_content()


def test_notify_test_sends_the_sample_through_all_three_while_the_service_runs(run):
    result = run["notify"]
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("sample alert #0: ttft-regression on reg-n/") and "links signed" in lines[0]
    assert [line.split()[:3] for line in lines[1:]] == [
        ["oncall-slack", "slack", "ok:"],
        ["oncall-teams", "teams", "ok:"],
        ["oncall-mail", "email", "ok:"],
    ]
    assert run["sample_slack"] and run["sample_teams"][0]["attachments"][0]["content"]["version"] == "1.5"
    assert any(p.get_content_type() == "image/png" for p in run["sample_mail"].message.walk())
    assert run["sample_chart"].status_code == 200 and png_ok(run["sample_chart"].content)


def test_no_secret_in_the_log_the_outbox_or_the_command_output(run):
    for where in ("log", "outbox"):
        for secret in (SLACK_TOKEN, TEAMS_SIG, SMTP_PASSWORD):
            assert secret not in run[where], (where, secret)
    assert not any(s in run["notify"].stdout + run["notify"].stderr for s in (SLACK_TOKEN, TEAMS_SIG, SMTP_PASSWORD))


def test_the_receivers_saw_no_secret_beyond_the_url_itself(run):
    bodies = json.dumps([run["slack"], run["teams"]]) + run["mails"][0].message.as_string()
    # (The webhook URL itself carries its token by design: it is where Slack and Teams take it.)
    assert SLACK_TOKEN not in bodies and TEAMS_SIG not in bodies and SMTP_PASSWORD not in bodies
