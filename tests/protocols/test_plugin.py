"""Adding a wire protocol is one module plus its simulator encoder: nothing else names it.

The test writes a throwaway protocol (a copy of Ollama's NDJSON module under another
name and path) and its encoder into folders on the two packages' `__path__`, exactly
where a new module would sit, and then uses it the way a user would: a config naming
the protocol loads, the probe measures it against the simulator, a fault maps to the
right error kind. No registry, table, or conftest entry is edited.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx
import pytest

import monitor.protocols
import monitor.simulator.wire
from monitor.config import load_config_text
from monitor.probe.runner import probe_target
from monitor.probe.tokens import o200k
from monitor.protocols import get_protocol, protocol_names
from monitor.simulator import wire
from monitor.simulator.testing import SimulatorThread

NAME = "throwaway-ndjson"
ROOT = Path(monitor.protocols.__file__).parent


def _throwaway_protocol() -> str:
    text = (ROOT / "ollama.py").read_text()
    return text.replace('name = "ollama"', f'name = "{NAME}"').replace('"api/chat"', '"api/throwaway"')


def _throwaway_encoder() -> str:
    text = (Path(wire.__file__).parent / "ollama.py").read_text()
    return text.replace('protocol = "ollama"', f'protocol = "{NAME}"').replace('"/api/chat"', '"/api/throwaway"')


@pytest.fixture
def throwaway(tmp_path):
    proto_dir, wire_dir = tmp_path / "protocols", tmp_path / "wire"
    proto_dir.mkdir()
    wire_dir.mkdir()
    (proto_dir / "throwaway_ndjson.py").write_text(_throwaway_protocol())
    (wire_dir / "throwaway_ndjson.py").write_text(_throwaway_encoder())
    monitor.protocols.__path__.append(str(proto_dir))
    monitor.simulator.wire.__path__.append(str(wire_dir))
    wire.discover()
    try:
        yield
    finally:
        monitor.protocols.__path__.remove(str(proto_dir))
        monitor.simulator.wire.__path__.remove(str(wire_dir))
        for mod in ("monitor.protocols.throwaway_ndjson", "monitor.simulator.wire.throwaway_ndjson"):
            sys.modules.pop(mod, None)
        from monitor.protocols import base

        base._REGISTRY.pop(NAME, None)
        wire.discover()


def _target(base_url: str, tmp_path: Path, model: str = "m"):
    config = {
        "providers": {"new": {"protocol": NAME, "regions": {"local": base_url}, "models": [model]}},
        "prompts": {"p": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 16}},
        "checks": [{"providers": ["new"], "prompts": ["p"], "ttft_timeout": "5s", "timeout": "10s"}],
    }
    (target,) = load_config_text(json.dumps(config), base_dir=tmp_path, env={}).targets
    return target


def test_a_new_protocol_module_is_found_measured_and_faulted_with_no_other_edit(throwaway, tmp_path):
    assert NAME in protocol_names()
    assert get_protocol(NAME).name == NAME
    from monitor.config.editor import json_schema  # editors are offered it too (`firsttoken schema`)

    assert NAME in json_schema()["$defs"]["Provider"]["properties"]["protocol"]["enum"]
    assert wire.BY_PROTOCOL[NAME].route("POST", "/api/throwaway") == {}

    async def probe(target):
        async with httpx.AsyncClient() as client:
            return await probe_target(client, target)

    o200k()  # the in-process simulator counts prompt tokens: load the tokenizer before timing
    with SimulatorThread() as sim:
        sim.set_model("m", ttft_ms=40, itl_ms=2, output_tokens=12)
        sim.set_model("broken", ttft_ms=10, fault="server_error")
        ok = asyncio.run(probe(_target(sim.base_url, tmp_path)))
        failed = asyncio.run(probe(_target(sim.base_url, tmp_path, "broken")))
        truth = sim.truth(ok.request_id)

    assert ok.ok, ok.error_message
    assert ok.output_tokens == 12 and ok.tokens_source == "usage"
    assert ok.ttft_ms is not None and 35 <= ok.ttft_ms < 500
    assert truth is not None and truth["protocol"] == NAME  # the new encoder served it
    assert not failed.ok and failed.error_kind == "server_error"


def test_an_unknown_protocol_is_still_a_config_error(tmp_path):
    with pytest.raises(Exception, match="protocol"):
        _target("http://127.0.0.1:1", tmp_path)
