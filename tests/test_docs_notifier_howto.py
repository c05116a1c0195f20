"""The Notifier how-tos page (docs/notifier-howto.md): one section per notifier type the code
discovers, and each section's test send run for real. Every `firsttoken notify test --notifier NAME`
shown is run with the config the section's YAML snippet gives (plus the page's `public_url` and one
target), its URLs pointed at a receiver on loopback (an SMTP server for email), and must print the
lines shown under it, `…` standing for what varies."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest
import yaml

from monitor.config.notifiers import notifier_types
from tests.alerts.receiver import Receiver
from tests.mailserver import MailServer

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "notifier-howto.md").read_text()
FENCE = re.compile(r"^```(yaml|console)\n(.*?)^```", re.S | re.M)
SECTION = re.compile(r"^## `([\w-]+)`\n", re.M)
BASE = {
    "providers": {
        "openai": {
            "protocol": "openai-chat",
            "api_key": "${OPENAI_API_KEY}",
            "regions": {"us-east": "http://127.0.0.1:1/v1"},
            "models": ["gpt-4o-mini"],
        }
    },
    "prompts": {"short": {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}},
    "checks": [{"providers": ["openai"], "prompts": ["short"]}],
}


def _sections() -> dict[str, str]:
    parts = SECTION.split(PAGE)
    return {parts[i]: parts[i + 1].split("\n## ")[0] for i in range(1, len(parts), 2)}


def _sends() -> list[tuple[str, dict, str, list[str]]]:
    """(notifier type, the snippet before it, the command, the lines shown) for every test send."""
    found = []
    for kind, text in _sections().items():
        snippet: dict = {}
        for lang, body in FENCE.findall(text):
            if lang == "yaml":
                snippet = yaml.safe_load(body)
                continue
            lines = body.splitlines()
            assert lines[0].startswith("$ firsttoken notify test --notifier "), lines[0]
            found.append((kind, snippet, lines[0][2:], [line for line in lines[1:] if line.strip()]))
    return found


SENDS = _sends()


def test_every_notifier_type_has_a_section_with_a_test_send():
    assert set(notifier_types()) <= set(_sections())
    assert {kind for kind, *_ in SENDS} >= set(notifier_types())
    public = yaml.safe_load(FENCE.findall(PAGE)[0][1])
    assert set(public) == {"public_url"}


def _point_at(entry: dict, stack: ExitStack, env: dict) -> None:
    """Point a notifier entry (or the variable its URL comes from) at a loopback stand-in."""
    kind = entry["type"]
    if kind in ("webhook", "pagerduty"):
        hook = stack.enter_context(Receiver(ok_status=202 if kind == "pagerduty" else 200))
        entry["url"] = f"{hook.url}/firsttoken"
    elif kind == "slack" and "token" in entry:
        entry["api_url"] = stack.enter_context(Receiver(reply=b'{"ok": true, "ts": "1"}')).url
    elif kind in ("slack", "teams"):
        hook = stack.enter_context(Receiver(ok_status=202 if kind == "teams" else 200))
        var = re.fullmatch(r"\$\{(\w+)\}", entry["url"]).group(1)
        env[var] = f"{hook.url}/hook?sig=abcdefghijklmnop"
    elif kind == "alertmanager":
        entry["url"] = [stack.enter_context(Receiver()).url for _ in entry["url"]]
    elif kind == "apprise":
        port = stack.enter_context(Receiver()).url.rsplit(":", 1)[1]
        for value in entry["urls"]:
            env[re.fullmatch(r"\$\{(\w+)\}", value).group(1)] = f"json://127.0.0.1:{port}/apprise"


@pytest.mark.parametrize("send", SENDS, ids=lambda s: s[2].split()[-1])
def test_the_test_send_prints_what_the_page_shows(send, tmp_path: Path) -> None:
    _kind, snippet, command, shown = send
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTTOKEN_")}
    env |= {"OPENAI_API_KEY": "sk-test", "FIRSTTOKEN_LINK_SECRET": "docs-test-link-secret"}
    snippet = json.loads(json.dumps(snippet))
    for var in re.findall(r"\$\{(\w+)\}", json.dumps(snippet)):
        env.setdefault(var, f"test-value-of-{var.lower()}")
    with ExitStack() as stack:
        for entry in snippet["notifiers"]:
            _point_at(entry, stack, env)
        shown_host = None
        if "smtp" in snippet:
            mail = stack.enter_context(MailServer())
            shown_host = f"{snippet['smtp']['host']}:{snippet['smtp']['port']}"
            snippet["smtp"] = {**snippet["smtp"], "host": "127.0.0.1", "port": mail.port, "starttls": False}
            snippet["smtp"].pop("username", None), snippet["smtp"].pop("password", None)
        config = {**BASE, "public_url": "https://firsttoken.internal.example.com:9464", **snippet}
        (tmp_path / "firsttoken.yaml").write_text(json.dumps(config))
        done = subprocess.run(
            [sys.executable, "-m", "monitor", *command.split()[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    printed = done.stdout
    if shown_host:
        printed = printed.replace(f"127.0.0.1:{mail.port}", shown_host)
    assert done.returncode == 0, done.stdout + done.stderr
    assert printed.splitlines() == shown, f"{command} printed:\n{printed}"
