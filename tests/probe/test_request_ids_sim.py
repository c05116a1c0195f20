"""A probe keeps the provider's request id for every protocol, a failed one too (DESIGN §17).

Against the simulator over loopback HTTP: a success, an HTTP 500 and an error after
the 200 each store the id the response's header carries, not the body's own id
(msg_…, chatcmpl-…, resp_…, a Gemini responseId), and `samples --csv` exports it.
The simulator issues `req_…` ids and keeps a truth record per id, so the stored id
must lead back to that very request, as the provider's support would look it up.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys

import pytest

from monitor.storage.store import store_samples
from tests.probe.test_runner import probe_all

PROTOCOLS = ("openai-chat", "openai-responses", "azure-openai", "anthropic", "gemini", "bedrock-converse", "ollama")
FAULTS = {None: None, "server_error": "server_error", "stream_error": "stream_error"}  # fault -> error_kind


def model_for(fault: str | None) -> str:
    return "sim:ttft=2:itl=1:tokens=4" + (f":fault={fault}" if fault else "")


@pytest.mark.parametrize("fault", list(FAULTS), ids=lambda f: f or "ok")
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_headers_request_id_is_stored(simulator, make_target, protocol: str, fault: str | None):
    (sample,) = probe_all([make_target(model_for(fault), protocol)])
    assert sample.ok is (fault is None), sample.error_message
    assert sample.error_kind == FAULTS[fault]
    # The header's req_… id, not the body's own (the simulator's body ids drop the req_ prefix).
    assert sample.request_id and sample.request_id.startswith("req_"), sample.request_id
    truth = simulator.truth(sample.request_id)
    assert truth is not None, sample.request_id
    assert (truth["protocol"], truth["model"], truth["fault"]) == (protocol, sample.model, fault)
    assert sample.http_status == truth["status"] == (500 if fault == "server_error" else 200)


def test_samples_csv_exports_the_request_id(tmp_path, make_target):
    targets = [make_target(model_for(fault), protocol) for protocol in PROTOCOLS for fault in FAULTS]
    probed = probe_all(targets, concurrency=4)
    assert all(s.request_id for s in probed), [(s.target, s.error_message) for s in probed if not s.request_id]
    url = f"sqlite:///{tmp_path / 'ids.db'}"
    env = {"FIRSTTOKEN_DATABASE_URL": url, "PATH": "/usr/bin:/bin"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        run = [sys.executable, "-m", "monitor", *args]
        return subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    assert cli("db", "upgrade").returncode == 0
    assert store_samples(url, probed) == len(probed)
    exported = cli("samples", "--since", "1h", "--csv")
    assert exported.returncode == 0, exported.stderr
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(exported.stdout))}
    assert len(rows) == len(probed)
    for sample in probed:
        assert rows[sample.id]["request_id"] == sample.request_id, (sample.target, sample.error_kind)
