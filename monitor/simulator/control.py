"""The control API under `/_sim/`: what tests and benchmarks use to steer and check.

GET    /_sim/health              status, uptime, request and stream counts
GET    /_sim/models              the default behaviour and every named model
GET    /_sim/models/{name}       one model's behaviour (a `sim:` name is parsed)
PUT    /_sim/models/{name}       upsert: JSON behaviour fields merged over the current ones
DELETE /_sim/models/{name}       forget a runtime or scenario model
GET    /_sim/truth/{request_id}  the truth record of a request
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

from monitor.simulator.behaviour import BehaviourError
from monitor.simulator.catalogue import Catalogue
from monitor.simulator.truth import TruthStore

if TYPE_CHECKING:
    from monitor.simulator.http import Connection
    from monitor.simulator.request import Request


class Simulator(Protocol):
    """What the control API reads and steers of the server (server.py imports this module, not the reverse)."""

    started_s: float
    requests: int
    active_streams: int
    truth: TruthStore
    catalogue: Catalogue


PREFIX = "/_sim/"


def _error(conn: Connection, status: int, message: str) -> None:
    conn.send_json(status, {"error": {"message": message, "type": "not_found" if status == 404 else "invalid_request"}})


def handle(sim: Simulator, conn: Connection, req: Request) -> None:
    resource, _, rest = req.path[len(PREFIX) :].partition("/")
    name = unquote(rest)
    method = req.method
    if resource == "health" and not rest and method == "GET":
        conn.send_json(
            200,
            {
                "status": "ok",
                "uptime_s": round(time.time() - sim.started_s, 3),
                "requests": sim.requests,
                "active_streams": sim.active_streams,
                "truth_records": len(sim.truth),
            },
        )
    elif resource == "models" and not rest and method == "GET":
        models = {key: b.to_dict() for key, b in sorted(sim.catalogue.snapshot().items())}
        conn.send_json(200, {"default": sim.catalogue.default.to_dict(), "models": models})
    elif resource == "models" and rest:
        _model(sim, conn, req, name)
    elif resource == "truth" and rest and method == "GET":
        record = sim.truth.get(name)
        if record is None:
            _error(conn, 404, f"no truth record for request id {name!r}")
        else:
            conn.send_json(200, record.to_dict())
    else:
        _error(conn, 404, f"unknown control endpoint: {method} {req.path}")


def _model(sim: Simulator, conn: Connection, req: Request, name: str) -> None:
    if req.method == "GET":
        try:
            behaviour = sim.catalogue.behaviour_for(name)
        except BehaviourError as exc:
            _error(conn, 400, str(exc))
            return
        conn.send_json(
            200, {"name": name, "behaviour": behaviour.to_dict(), "known": sim.catalogue.get(name) is not None}
        )
    elif req.method == "PUT":
        data = req.json() if req.body else {}
        if not isinstance(data, dict):
            _error(conn, 400, "expected a JSON object of behaviour fields")
            return
        try:
            behaviour = sim.catalogue.upsert(name, data)
        except BehaviourError as exc:
            _error(conn, 400, str(exc))
            return
        conn.send_json(200, {"name": name, "behaviour": behaviour.to_dict()})
    elif req.method == "DELETE":
        if sim.catalogue.remove(name):
            conn.send_json(200, {"name": name, "removed": True})
        else:
            _error(conn, 404, f"no model named {name!r}")
    else:
        _error(conn, 405, f"method {req.method} not allowed here")
