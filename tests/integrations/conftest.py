"""One `firsttoken run` against the simulator, an OTLP receiver it exports to, and a real Prometheus
scraping it, shared by the integration tests of this package (each costs seconds to warm up).

Everything listens on 127.0.0.1; Prometheus has no remote write, no Alertmanager and no service
discovery beyond the one static loopback target.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.net import free_port
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
FIRSTTOKEN = [sys.executable, "-m", "monitor"]
# Deterministic simulated models: every TTFT lands in one histogram bucket; one model always fails.
FAST = "sim:ttft=120:itl=3:tokens=8:jitter=0"
SLOW = "sim:ttft=320:itl=6:tokens=6:jitter=0"
BROKEN = "sim:fault=server_error"
MODELS = (FAST, SLOW, BROKEN)
AGENT = "integ-agent"
SECRET_KEY = "sk-integ-SECRET-9f3c1e77"


def need(binary: str) -> str:
    path = shutil.which(binary)
    # `make test` installs these (integration-deps); a missing one is a failure, never a skip.
    assert path, f"{binary} is not installed: run `make integration-deps`"
    return path


class OtlpReceiver:
    """An OTLP/HTTP metrics receiver: decodes each ExportMetricsServiceRequest it is sent."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceRequest,
            ExportMetricsServiceResponse,
        )

        self.requests: list = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request = ExportMetricsServiceRequest()
                request.ParseFromString(body)
                receiver.requests.append(request)
                receiver.paths.append(self.path)
                reply = ExportMetricsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class StatusPageServer:
    """A provider's official status page: serves `document` as Statuspage v2 summary JSON, and
    `maintenances` (its `scheduled_maintenances`) at `scheduled-maintenances.json` beside it (404
    while None). `hits` counts the summary's GETs, `maintenance_hits` the other's."""

    def __init__(self) -> None:
        self.document: dict = {"page": {"id": "x", "name": "Sim"}, "incidents": [], "components": []}
        self.maintenances: list | None = []
        self.status_code = 200
        self.hits = 0
        self.maintenance_hits = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.endswith("/scheduled-maintenances.json"):
                    server.maintenance_hits += 1
                    if server.maintenances is None:
                        self.send_error(404)
                        return
                    doc = {"page": server.document.get("page"), "scheduled_maintenances": server.maintenances}
                    body = json.dumps(doc).encode()
                else:
                    server.hits += 1
                    body = json.dumps(server.document).encode()
                self.send_response(server.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/api/v2/summary.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def official_incident(iid: str, name: str, started: str, status: str = "investigating", **extra) -> dict:
    return {
        "id": iid,
        "name": name,
        "status": status,
        "impact": "major",
        "created_at": started,
        "started_at": started,
        "updated_at": started,
        "resolved_at": None,
        "shortlink": f"https://stspg.io/{iid}",
        "incident_updates": [],
        **extra,
    }


class RunningService:
    def __init__(
        self, workdir: Path, simulator, otlp_port: int, status_page: str | None = None, extra_config: dict | None = None
    ) -> None:
        self.workdir = workdir
        self.db = workdir / "integ.db"
        self.config = workdir / "firsttoken.yaml"
        config = {
            "database": f"sqlite:///{self.db}",
            "agent": AGENT,
            "dashboard_url": "http://dashboard.internal.example:8501",
            "defaults": {"interval": "1s", "timeout": "5s", "ttft_timeout": "3s"},
            "providers": {
                "sim": {
                    "protocol": "openai-chat",
                    "api_key": SECRET_KEY,
                    "regions": {"local": simulator.base_url + "/v1"},
                    "models": list(MODELS),
                    **({"status_page": status_page} if status_page else {}),
                }
            },
            "prompts": {"short": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}},
            "checks": [{"providers": ["sim"], "prompts": ["short"]}],
            # The always-failing model pages: an incident for the public status and feed.
            "alerts": [
                {
                    "name": "broken-errors",
                    "metric": "error_rate",
                    "kind": "threshold",
                    "above": 0.5,
                    "window": "5s",
                    "min_samples": 2,
                    "for_evaluations": 1,
                    "match": {"model": BROKEN},
                }
            ],
            "notifiers": [{"name": "log", "type": "log"}],
            "alerting": {"evaluate_every": "1s", "deliver_every": "1s", "settle": "1s", "group_wait": "1s"},
            **(extra_config or {}),
        }
        self.config.write_text(json.dumps(config))
        subprocess.run(
            [*FIRSTTOKEN, "db", "upgrade", "--config", str(self.config)], check=True, capture_output=True, cwd=workdir
        )
        self.port = free_port()
        self.log = open(workdir / "run.log", "w+")  # noqa: SIM115  (closed in stop)
        env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{otlp_port}",
            "OTEL_METRIC_EXPORT_INTERVAL": "1000",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=ci,team=llm-sre",
        }
        env.pop("OTEL_SEMCONV_STABILITY_OPT_IN", None)
        self.proc = subprocess.Popen(
            [*FIRSTTOKEN, "run", "--config", str(self.config), "--listen", f"127.0.0.1:{self.port}"],
            cwd=workdir,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        assert wait_for(self.healthy, 30), self.output()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def healthy(self) -> bool:
        try:
            return httpx.get(self.url + "/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def scrape(self) -> str:
        return httpx.get(self.url + "/metrics", timeout=5).text

    def output(self) -> str:
        self.log.flush()
        return (self.workdir / "run.log").read_text()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        return self.proc.returncode


class PrometheusServer:
    """Debian's prometheus on loopback, scraping one target every second, evaluating our rules."""

    def __init__(
        self, workdir: Path, target: str, extra_rules: dict[str, str] | None = None, evaluation_interval: str = "1s"
    ) -> None:
        binary = need("prometheus")
        rules = workdir / "rules"
        shutil.copytree(ROOT / "deploy/prometheus/rules", rules)
        for name, text in (extra_rules or {}).items():  # e.g. `firsttoken slo rules` output
            (rules / name).write_text(text)
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": evaluation_interval},
            "rule_files": [str(rules / "*.yml")],
            "scrape_configs": [{"job_name": "firsttoken", "static_configs": [{"targets": [target]}]}],
        }
        (workdir / "prometheus.yml").write_text(json.dumps(config))
        self.port = free_port()
        self.log = open(workdir / "prometheus.log", "w+")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                binary,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=1h",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        assert wait_for(self.ready, 30), (workdir / "prometheus.log").read_text()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ready(self) -> bool:
        try:
            return httpx.get(self.url + "/-/ready", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def query(self, expr: str, at: float | None = None) -> dict:
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        response = httpx.get(self.url + "/api/v1/query", params=params, timeout=10)
        body = response.json()
        assert body.get("status") == "success", (expr, body)
        return body["data"]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="session")
def otlp_receiver() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="session")
def status_page() -> Iterator[StatusPageServer]:
    page = StatusPageServer()
    page.document["incidents"] = [official_incident("inc-run-1", "Elevated error rates", "2026-01-01T00:00:00Z")]
    yield page
    page.stop()


# Package-scoped: the agent and Prometheus stop when this package's tests are done, rather than
# probing and scraping beside the rest of the session.
@pytest.fixture(scope="package")
def running(tmp_path_factory, simulator, otlp_receiver, status_page) -> Iterator[RunningService]:
    service = RunningService(tmp_path_factory.mktemp("integ-run"), simulator, otlp_receiver.port, status_page.url)
    try:
        # Every model probed a few times, so histograms and counters have something in them.
        assert wait_for(lambda: service.scrape().count("firsttoken_probes_total{") >= len(MODELS), 30)
        yield service
    finally:
        code = service.stop()
        assert code == 0, service.output()


@pytest.fixture(scope="package")
def prometheus(tmp_path_factory, running) -> Iterator[PrometheusServer]:
    server = PrometheusServer(tmp_path_factory.mktemp("integ-prom"), f"127.0.0.1:{running.port}")
    try:
        yield server
    finally:
        server.stop()
