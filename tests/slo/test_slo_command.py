"""`firsttoken slo [--json]` and `firsttoken slo rules` through the real command line, on a SQLite
database with rollups built by the service's own job."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

from monitor.cli import main
from monitor.sample import Sample
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.queries import insert_samples
from monitor.storage.rollups import rollup_hours

CONFIG = """
database: sqlite:///{db}
providers:
  sim: {{protocol: openai-chat, regions: {{local: "http://127.0.0.1:9/v1"}}, models: [good, flaky]}}
prompts:
  short: {{messages: [{{role: user, content: hi}}], max_tokens: 8}}
checks: [{{providers: [sim], prompts: [short]}}]
slos:
  - name: chat
    objective: 99%
    period: 1d
    good: {{ttft_ms: {{below: 1024}}}}
"""


def seed(tmp_path: Path, now: datetime) -> Path:
    db = tmp_path / "slo.db"
    engine = make_engine(f"sqlite:///{db}")
    migrate.upgrade(engine)
    samples = []
    for minute in range(24 * 60):
        at = now - timedelta(days=1) + timedelta(minutes=minute)
        for model in ("good", "flaky"):
            ok = not (model == "flaky" and minute % 20 == 0)  # 5% failures: 5x the budget's pace
            samples.append(
                Sample(
                    target=f"sim/{model}@local:short",
                    provider="sim",
                    model=model,
                    region="local",
                    prompt="short",
                    started_at=at,
                    ok=ok,
                    error_kind=None if ok else "server_error",
                    ttft_ms=300.0 if ok else None,
                )
            )
    insert_samples(engine, samples)
    rollup_hours(engine, now - timedelta(days=1, hours=1), now + timedelta(hours=1), now=now)
    engine.dispose()
    config = tmp_path / "firsttoken.yaml"
    config.write_text(CONFIG.format(db=db))
    return config


def test_status_json_and_table(tmp_path, capsys):
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    config = seed(tmp_path, now)
    assert main(["slo", "--json", "--config", str(config)]) == 0
    rows = {r["scope"]["model"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(rows) == {"good", "flaky"}
    good, flaky = rows["good"], rows["flaky"]
    assert good["attainment"] == 1.0 and good["budget_remaining"] == 1.0 and good["exhausts_at"] is None
    assert good["period"] == "1d" and good["objective"] == 0.99 and good["slo"] == "chat"
    # The period's first hour is read only when the period starts on it (rollups are whole hours):
    # the command's clock is a few seconds past the hour the samples were seeded up to.
    probes, bad = (1440, 72) if flaky["probes"] == 1440 else (1380, 69)
    assert (flaky["probes"], flaky["good"]) == (probes, probes - bad)
    assert flaky["budget_remaining"] == round(1 - bad / (0.01 * probes), 6)  # 5% bad against a 1% budget: spent
    assert set(flaky["burn_rates"]) == {"2m", "12m", "48m", "2h24m"}
    assert flaky["burn_rates"]["2h24m"] > 1
    assert main(["slo", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "SLO chat: 99% good over 1d, one budget per target" in out
    assert "sim/flaky@local:short" in out and "spent" in out


def test_rules_and_openslo(tmp_path, capsys):
    config = seed(tmp_path, datetime.now(UTC).replace(minute=0, second=0, microsecond=0))
    assert main(["slo", "rules", "--config", str(config)]) == 0
    document = yaml.safe_load(capsys.readouterr().out)
    records = [r["record"] for r in document["groups"][0]["rules"] if "record" in r]
    assert records[0] == "firsttoken_slo:error_ratio:rate10s" and len(records) == 7
    assert main(["slo", "rules", "--openslo", "--config", str(config)]) == 0
    (doc,) = list(yaml.safe_load_all(capsys.readouterr().out))
    assert doc["apiVersion"] == "openslo/v1" and doc["spec"]["objectives"][0]["target"] == 0.99
    assert main(["slo", "--name", "nope", "--config", str(config)]) == 2
    assert "no SLO 'nope'" in capsys.readouterr().err


def test_backtest_replays_what_firsttoken_samples_wrote(tmp_path, capsys):
    """`firsttoken samples --target ID --csv` is a file `backtest --slo` reads as it is."""
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    config = seed(tmp_path, now)
    assert (
        main(["samples", "--config", str(config), "--target", "sim/flaky@local:short", "--since", "2d", "--csv"]) == 0
    )
    history = tmp_path / "flaky.csv"
    history.write_text(capsys.readouterr().out)
    assert main(["backtest", "--config", str(config), "--slo", "chat", "--csv", str(history), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    summary = lines[-1]["summary"]
    assert (summary["probes"], summary["good"]) == (1440, 1368)
    assert lines[0]["event"] == "firing"  # 5% failing against a 1% budget burns at 5x
