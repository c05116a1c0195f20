"""`firsttoken run` as a real process against the simulator: the service's promises."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.net import free_port
from tests.waiting import wait_for

FIRSTTOKEN = [sys.executable, "-m", "monitor"]


def write_config(path: Path, simulator, models: list[str], db: Path, interval: str = "1s") -> None:
    config = {
        "database": f"sqlite:///{db}",
        "agent": "svc-test",
        "defaults": {"interval": interval, "timeout": "5s", "ttft_timeout": "3s"},
        "providers": {
            "sim": {
                "protocol": "openai-chat",
                "api_key": "sk-service-test-key",
                "regions": {"local": simulator.base_url + "/v1"},
                "models": models,
            }
        },
        "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}},
        "checks": [{"providers": ["sim"], "prompts": ["short"]}],
    }
    path.write_text(json.dumps(config))


def stored(db: Path) -> list[tuple]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        try:
            return conn.execute("SELECT target, ok, error_kind FROM samples").fetchall()
        except sqlite3.OperationalError:
            return []


def migrate(config: Path) -> None:
    subprocess.run([*FIRSTTOKEN, "db", "upgrade", "--config", str(config)], check=True, capture_output=True)


class Running:
    def __init__(self, config: Path, cwd: Path) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [*FIRSTTOKEN, "run", "--config", str(config), "--listen", f"127.0.0.1:{self.port}"],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert wait_for(self.healthy, 20), self.output()

    def healthy(self):
        try:
            return httpx.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def metrics(self) -> str:
        return httpx.get(f"http://127.0.0.1:{self.port}/metrics", timeout=2).text

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(20)

    def output(self) -> str:
        if self.proc.poll() is None:
            self.proc.kill()
        return self.proc.stdout.read() if self.proc.stdout else ""


def test_run_refuses_an_unmigrated_database(tmp_path, simulator):
    config = tmp_path / "firsttoken.yaml"
    write_config(config, simulator, ["m"], tmp_path / "fresh.db")
    result = subprocess.run([*FIRSTTOKEN, "run", "--config", str(config)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "firsttoken db upgrade" in lines[0], result.stderr


def test_service_probes_stores_reloads_and_shuts_down_cleanly(tmp_path, simulator):
    db = tmp_path / "svc.db"
    config = tmp_path / "firsttoken.yaml"
    fast, limited = "sim:ttft=20:itl=2:tokens=5:jitter=0", "sim:fault=rate_limited"
    write_config(config, simulator, [fast, limited], db)
    migrate(config)
    service = Running(config, tmp_path)
    try:
        assert wait_for(
            lambda: {t for t, *_ in stored(db)} >= {f"sim/{fast}@local:short", f"sim/{limited}@local:short"}
        )
        metrics = service.metrics()
        assert 'firsttoken_probes_total{agent="svc-test"' in metrics
        assert 'error_kind="rate_limited"' in metrics and "firsttoken_ttft_seconds_bucket" in metrics
        health = httpx.get(f"http://127.0.0.1:{service.port}/healthz").json()
        assert health["ok"] and health["targets"] == 2 and health["leader"] is True

        # A new model appears in the file: picked up without a restart.
        added = "sim:ttft=10:itl=1:tokens=3:jitter=0"
        write_config(config, simulator, [fast, limited, added], db)
        assert wait_for(lambda: f"sim/{added}@local:short" in {t for t, *_ in stored(db)}, 20)

        # An invalid config is refused; the running one keeps probing.
        config.write_text("providers: [this is not a mapping")
        service.proc.send_signal(signal.SIGHUP)
        before = len(stored(db))
        assert wait_for(lambda: len(stored(db)) > before + 3, 15)
        assert service.healthy()

        # A reload over a `budget:` that refuses is refused as a start would be: the running config stays.
        pricey = "sim:ttft=10:itl=1:tokens=4:jitter=0"
        write_config(config, simulator, [fast, limited, added, pricey], db)
        spec = json.loads(config.read_text())
        spec["prices"] = {f"sim/{pricey}": {"input": 1000.0, "output": 1000.0}}
        spec["budget"] = {"monthly_usd": 1, "action": "refuse"}
        config.write_text(json.dumps(spec))
        service.proc.send_signal(signal.SIGHUP)
        before = len(stored(db))
        assert wait_for(lambda: len(stored(db)) > before + 6, 15)
        assert f"sim/{pricey}@local:short" not in {t for t, *_ in stored(db)}
        assert 'firsttoken_config_reloads_total{result="refused"} 2.0' in service.metrics()
    finally:
        code = service.stop()
        output = service.output()
    assert code == 0, output
    assert "config reload refused" in output
    assert "exceeds budget.monthly_usd $1.00 (budget.action refuse)" in output
    assert "Traceback" not in output
    # SIGTERM flushed everything: every probe /metrics counted is in the database.
    assert stored(db)


def test_secrets_stay_out_of_logs_and_metrics(tmp_path, simulator):
    db = tmp_path / "svc.db"
    config = tmp_path / "firsttoken.yaml"
    write_config(config, simulator, ["sim:fault=echo_key"], db)
    migrate(config)
    service = Running(config, tmp_path)
    try:
        assert wait_for(lambda: stored(db))
        metrics = service.metrics()
    finally:
        service.stop()
        output = service.output()
    assert "sk-service-test-key" not in metrics + output
    with sqlite3.connect(db) as conn:
        messages = [m for (m,) in conn.execute("SELECT error_message FROM samples")]
    assert messages and all("sk-service-test-key" not in m for m in messages)


@pytest.mark.parametrize("value", ["nohost", "1.2.3.4:99999", ":x"])
def test_bad_listen_address_is_a_usage_error(tmp_path, value):
    result = subprocess.run(
        [*FIRSTTOKEN, "run", "--listen", value, "--config", str(tmp_path / "missing.yaml")],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert result.returncode == 2 and "--listen" in result.stderr
