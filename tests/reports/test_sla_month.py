"""A planted month, imported with `samples import`, reported by `report sla` (DESIGN §17): to the minute.

The month (2026-11, 43,200 minutes): provider `acme`, one model, two prompts (two targets), three
vantage points probing every target every 5 minutes, each in the same minute (5, 15 and 25 s past
it). Planted, UTC:

| when                  | who                   | what                               | counts as                |
|-----------------------|-----------------------|------------------------------------|--------------------------|
| Nov 3 10:00–17:00     | all, both targets     | server_error                       | 420 minutes down         |
| Nov 12 08:00–08:20    | us, eu; target `long` | timeout                            | 20 minutes down (2 of 3) |
| Nov 10 14:00–14:20    | ap only               | connect                            | 20 left out: one vantage |
| Nov 15 02:00–03:00    | all                   | server_error, inside a maintenance | 60 left out: maintenance |
| Nov 20 09:00–09:30    | all                   | auth                               | up                       |
| Nov 21 09:00–09:30    | all                   | rate_limited                       | up                       |
| Nov 22 09:00–09:30    | all                   | assertion                          | up                       |
| Nov 25 00:00–02:00    | nobody probes         | —                                  | 117 left out: no data    |
| Nov 7 13:00–14:00     | all                   | TPS 30 (contract: at least 50)     | 60 slow minutes          |
| Nov 8 13:00–13:30     | eu only               | TPS 30                             | 30 latency left out      |

The truth below is arithmetic on this table and the documented rules, not the report's code: a
probe's verdict stands until the next probe of its series, at most ceil(1.5 × 5) = 8 minutes, so
the probes stopped at 23:55 still speak for 00:00–00:02 of Nov 25 (117 = 120 - 3 no-data minutes).
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from datetime import UTC, datetime, timedelta

import pytest

from monitor.sample import Sample, write_csv
from tests.commandline import firsttoken_cli

MONTH = datetime(2026, 11, 1, tzinfo=UTC)
MINUTES = 30 * 24 * 60
AGENTS = {"us": 5, "eu": 15, "ap": 25}  # seconds past the minute
TARGETS = ("short", "long")
TPS_OK, TPS_SLOW = 80.0, 30.0


def at(day: int, hh: int, mm: int) -> int:
    """Minute index in the month."""
    return ((day - 1) * 24 + hh) * 60 + mm


def span(day, h0, m0, h1, m1) -> range:
    return range(at(day, h0, m0), at(day, h1, m1))


CONFIRMED = span(3, 10, 0, 17, 0)
PARTIAL = span(12, 8, 0, 8, 20)  # us and eu, target long only
ONE_AGENT = span(10, 14, 0, 14, 20)  # ap
MAINTENANCE = span(15, 2, 0, 3, 0)
NOT_COUNTED = {"auth": span(20, 9, 0, 9, 30), "rate_limited": span(21, 9, 0, 9, 30), "assertion": span(22, 9, 0, 9, 30)}
SILENT = span(25, 0, 0, 2, 0)
SLOW_ALL = span(7, 13, 0, 14, 0)
SLOW_EU = span(8, 13, 0, 13, 30)

CONFIG = """
providers:
  acme:
    protocol: openai-chat
    api_key: ${ACME_KEY}
    regions: {r1: "http://127.0.0.1:9/v1"}
    models: [m]
    contract:
      uptime:
        minute_down: {error_rate: 5%}
        credits: [{below: 99.9%, credit: 10%}, {below: 99.0%, credit: 25%}, {below: 95.0%, credit: 100%}]
      latency:
        minute_ok: {tps_at_least: 50}
        objective: 99%
      claim_days: 30
prompts:
  short: {messages: [{role: user, content: hi}]}
  long: {messages: [{role: user, content: hello}]}
checks:
  - {providers: [acme], prompts: [short, long]}
maintenance:
  - {name: planned-upgrade, match: {provider: acme}, start: "2026-11-15T02:00:00Z", end: "2026-11-15T03:00:00Z"}
"""


def outcome(agent: str, prompt: str, minute: int) -> tuple[str | None, float]:
    """(error kind or None, TPS) of this probe."""
    if minute in CONFIRMED or minute in MAINTENANCE:
        return "server_error", 0.0
    if minute in PARTIAL and agent in ("us", "eu") and prompt == "long":
        return "timeout", 0.0
    if minute in ONE_AGENT and agent == "ap":
        return "connect", 0.0
    for kind, minutes in NOT_COUNTED.items():
        if minute in minutes:
            return kind, 0.0
    if minute in SLOW_ALL or (minute in SLOW_EU and agent == "eu"):
        return None, TPS_SLOW
    return None, TPS_OK


def planted() -> list[Sample]:
    out = []
    for minute in range(0, MINUTES, 5):
        if minute in SILENT:
            continue
        for agent, offset_s in AGENTS.items():
            for prompt in TARGETS:
                kind, tps = outcome(agent, prompt, minute)
                out.append(
                    Sample(
                        target=f"acme/m@r1:{prompt}",
                        provider="acme",
                        model="m",
                        region="r1",
                        prompt=prompt,
                        started_at=MONTH + timedelta(minutes=minute, seconds=offset_s),
                        ok=kind is None,
                        error_kind=kind,
                        ttft_ms=300.0 if kind is None else None,
                        tps=tps if kind is None else None,
                        output_tokens=50 if kind is None else None,
                        http_status=200 if kind is None else 503,
                        request_id=f"req-{agent}-{prompt}-{minute}",
                        agent=agent,
                        id=f"{agent}-{prompt}-{minute}",
                    )
                )
    return out


def truth() -> dict:
    """The expected figures, from the table (see the module's docstring)."""
    stands = {m for start in range(0, MINUTES, 5) if start not in SILENT for m in range(start, start + 8)}
    no_data = [m for m in range(MINUTES) if m not in stands]
    down = len(CONFIRMED) + len(PARTIAL)
    left_out = {
        "maintenance": len(MAINTENANCE),
        "seen from one vantage point only": len(ONE_AGENT),
        "no data": len(no_data),
    }
    counted = MINUTES - sum(left_out.values())
    # latency: minutes where nobody had a successful probe are left out too
    failed_everywhere = len(CONFIRMED) + sum(len(m) for m in NOT_COUNTED.values())
    lat_counted = MINUTES - len(MAINTENANCE) - len(no_data) - failed_everywhere - len(SLOW_EU)
    return {
        "down": down,
        "counted": counted,
        "uptime": 1 - down / counted,
        "left_out": left_out,
        "no_data": len(no_data),
        "slow": len(SLOW_ALL),
        "lat_counted": lat_counted,
        "lat_sli": 1 - len(SLOW_ALL) / lat_counted,
        "lat_left_out": {
            "maintenance": len(MAINTENANCE),
            "no data": len(no_data),
            "no successful probe": failed_everywhere,
            "seen from one vantage point only": len(SLOW_EU),
        },
    }


cli = firsttoken_cli  # ACME_KEY unset: a report needs no provider key


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_planted_month_is_reported_to_the_minute(tmp_path, backend, request):
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'sla.db'}"
    else:
        from tests.pg import pg_url

        url = pg_url(request.getfixturevalue("pg_server").create_database())
    (tmp_path / "firsttoken.yaml").write_text(CONFIG)
    csv_file = tmp_path / "month.csv"
    out = io.StringIO()
    write_csv(planted(), out)
    csv_file.write_text(out.getvalue())
    assert cli(tmp_path, url, "db", "upgrade").returncode == 0
    loaded = cli(tmp_path, url, "samples", "import", str(csv_file))
    assert loaded.returncode == 0, loaded.stderr

    done = cli(tmp_path, url, "report", "sla", "--month", "2026-11", "--format", "json", "-o", "sla.json")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "sla.json").read_text())
    (contract,) = report["contracts"]
    expected = truth()
    uptime = contract["uptime"]
    assert uptime["minutes_bad"] == expected["down"] == 440
    assert uptime["minutes_counted"] == expected["counted"]
    assert uptime["value"] == pytest.approx(expected["uptime"], abs=1e-12)
    assert uptime["minutes_left_out"] == expected["left_out"]
    assert contract["credit"] == {"below": 0.99, "credit": 0.25}  # 98.977%: under 99.0%, not under 95%
    assert contract["claim_deadline"] == "2026-12-31T00:00:00Z"
    assert sorted(contract["vantage_points"]) == ["ap", "eu", "us"]

    down = {m["minute"]: m for m in uptime["broken_minutes"]}
    first = down["2026-11-03T10:00:00Z"]
    assert sorted(first["vantage_points"]) == ["ap", "eu", "us"] and first["error_kinds"] == {"server_error": 6}
    assert "req-us-long-3480" in first["request_ids"] and len(first["request_ids"]) == 6
    held = down["2026-11-03T10:04:00Z"]  # the 10:00 probes still speak for 10:04
    assert held["request_ids"] == first["request_ids"]
    partial = down["2026-11-12T08:00:00Z"]
    assert sorted(partial["vantage_points"]) == ["eu", "us"] and partial["targets"] == ["acme/m@r1:long"]
    assert partial["error_kinds"] == {"timeout": 2} and partial["quorum"] == 2
    assert "2026-11-10T14:00:00Z" not in down and "2026-11-15T02:00:00Z" not in down
    left = {(r["from"], r["reason"]) for r in uptime["left_out"]}
    assert ("2026-11-10T14:00:00Z", "seen from one vantage point only") in left
    assert ("2026-11-15T02:00:00Z", "maintenance") in left
    assert ("2026-11-25T00:03:00Z", "no data") in left

    latency = contract["latency"]
    assert latency["minutes_bad"] == expected["slow"] == 60
    assert latency["minutes_counted"] == expected["lat_counted"]
    assert latency["value"] == pytest.approx(expected["lat_sli"], abs=1e-12)
    assert latency["minutes_left_out"] == expected["lat_left_out"]
    assert latency["met"] is True  # 99.86% of minutes at least 50 tokens/s against 99%

    csv_out = cli(tmp_path, url, "report", "sla", "--month", "2026-11", "--format", "csv")
    assert csv_out.returncode == 0, csv_out.stderr
    rows = [line.split(",") for line in csv_out.stdout.splitlines()[1:]]
    assert sum(1 for r in rows if r[2] == "uptime" and r[4] == "down") == 440
    assert sum(1 for r in rows if r[2] == "latency" and r[4] == "slow") == 60


def test_the_pdf_opens_with_poppler_and_states_the_provider_uptime_and_credit(tmp_path):
    url = f"sqlite:///{tmp_path / 'sla.db'}"
    (tmp_path / "firsttoken.yaml").write_text(CONFIG)
    assert cli(tmp_path, url, "db", "upgrade").returncode == 0
    csv_file = tmp_path / "month.csv"
    out = io.StringIO()
    day = [s for s in planted() if MONTH + timedelta(days=2, hours=8) <= s.started_at < MONTH + timedelta(days=3)]
    write_csv(day, out)
    csv_file.write_text(out.getvalue())
    assert cli(tmp_path, url, "samples", "import", str(csv_file)).returncode == 0
    # 09:00 to 11:00 on Nov 3: the outage's first hour, 60 of 120 minutes down
    done = cli(tmp_path, url, "report", "sla", "--from", "2026-11-03T09:00:00Z", "--to", "2026-11-03T11:00:00Z",
               "--format", "pdf", "-o", "sla.pdf")  # fmt: skip
    assert done.returncode == 0, done.stderr
    pdf = tmp_path / "sla.pdf"
    assert shutil.which("pdftotext"), "poppler-utils is missing: `make integration-deps` installs it"
    assert pdf.read_bytes().startswith(b"%PDF-")
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    words = " ".join(text.split())
    assert "acme" in text and "50.000% (60 minutes down of 120 counted)" in words
    assert "100% of the period's bill (uptime below 95%)" in words  # 50% is under 95%: the 100% tier
    assert "req-us-long-3480" in "".join(text.split())  # the failed 10:00 probe (ids may wrap in a cell)
    pages = subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "page")],
                           capture_output=True, check=True)  # fmt: skip
    (first_page,) = tmp_path.glob("page-*1.png")  # page-1.png, or page-01.png past 9 pages
    assert pages.returncode == 0 and first_page.stat().st_size > 1000
