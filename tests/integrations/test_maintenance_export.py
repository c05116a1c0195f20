"""`firsttoken maintenance export --alertmanager` (DESIGN §16) accepted by the real `amtool
check-config` (Debian's prometheus-alertmanager): the fragment, pasted into a minimal
alertmanager.yml whose route mutes with every interval, is a valid config."""

from __future__ import annotations

import json
import subprocess

import pytest

from monitor.cli import main
from tests.integrations.conftest import need

pytestmark = pytest.mark.integration

WINDOWS = [
    {  # maps exactly: weekdays and times in its zone, and past midnight into Monday
        "name": "openai-sunday",
        "match": {"provider": "openai"},
        "rrule": "FREQ=WEEKLY;BYDAY=SA,SU;BYHOUR=23;BYMINUTE=30",
        "duration": "1h",
        "timezone": "Europe/Berlin",
    },
    {"name": "daily", "match": {"region": "eu"}, "rrule": "FREQ=DAILY;BYHOUR=4,16", "duration": "15m"},
    {  # does not: explicit dates over the next 30 days
        "name": "monthly",
        "match": {"provider": "openai", "model": "gpt-4o*"},
        "rrule": "FREQ=MONTHLY;BYMONTHDAY=1,15;BYHOUR=3",
        "duration": "90m",
        "timezone": "America/New_York",
    },
    {"name": "fortnightly", "match": {"provider": "x"}, "rrule": "FREQ=WEEKLY;INTERVAL=2;BYDAY=WE", "duration": "26h"},
    {"name": "one-off", "match": {"provider": "x"}, "start": "2099-01-01T22:00:00Z", "end": "2099-01-03T01:10:00Z"},
]


def test_the_export_passes_amtool_check_config(tmp_path, monkeypatch, capsys):
    amtool = need("amtool")
    config = {
        "providers": {
            "openai": {"protocol": "openai-chat", "regions": {"us": "http://127.0.0.1:9/v1"}, "models": ["m"]}
        },
        "prompts": {"p": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
        "checks": [{"providers": ["openai"], "prompts": ["p"]}],
        "maintenance": WINDOWS,
    }
    path = tmp_path / "firsttoken.yaml"
    path.write_text(json.dumps(config))
    monkeypatch.setenv("FIRSTTOKEN_DATABASE_URL", f"sqlite:///{tmp_path / 'm.db'}")
    assert main(["db", "upgrade", "--config", str(path)]) == 0
    add = ["maintenance", "add", "--match", "provider=openai", "--for", "2h", "--note", "keys", "--config", str(path)]
    assert main(add) == 0
    capsys.readouterr()
    assert main(["maintenance", "export", "--alertmanager", "--config", str(path)]) == 0
    fragment = capsys.readouterr().out
    names = ["openai-sunday", "daily", "monthly", "fortnightly", "maintenance-1"]  # the one-off is 73 years away
    for name in names:
        assert f'- name: "{name}"' in fragment
    assert '"one-off"' not in fragment
    assert 'weekdays: ["sunday", "saturday"]' not in fragment and 'weekdays: ["saturday", "sunday"]' in fragment
    assert 'location: "Europe/Berlin"' in fragment and 'days_of_month: ["1"]' in fragment
    route = f"""route:
  receiver: pager
  routes:
    - receiver: pager
      matchers: ['provider="openai"']
      mute_time_intervals: {json.dumps(names)}
receivers:
  - name: pager
"""
    am = tmp_path / "alertmanager.yml"
    am.write_text(route + fragment)
    done = subprocess.run([amtool, "check-config", str(am)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr + am.read_text()
    assert "SUCCESS" in done.stdout
