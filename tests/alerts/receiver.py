"""A tiny HTTP receiver on loopback for notifier tests: records every POST, answers as told."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    raw: bytes
    status: int  # what the receiver answered

    def json(self) -> Any:
        return json.loads(self.raw)


class Receiver:
    """`fail_first` requests get `fail_status`; the rest `ok_status`. `accepted` are the 2xx ones."""

    def __init__(
        self,
        *,
        fail_first: int = 0,
        fail_status: int = 500,
        ok_status: int = 200,
        delay_s: float = 0.0,
        echo: bool = False,
        reply: bytes | None = None,
    ):
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.ok_status = ok_status
        self.delay_s = delay_s
        self.echo = echo  # failures answer with the request body (as some APIs quote what they refused)
        self.reply = reply  # what a 2xx answers (Slack's Web API: `{"ok": true}`); default `{"status":"success"}`
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    status = (
                        receiver.fail_status if len(receiver.requests) < receiver.fail_first else receiver.ok_status
                    )
                    receiver.requests.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, raw, status)
                    )
                if receiver.delay_s:
                    time.sleep(receiver.delay_s)
                body = (receiver.reply or b'{"status":"success"}') if status < 300 else b'{"error":"try later"}'
                if status >= 300 and receiver.echo:
                    body = raw
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def accepted(self) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if 200 <= r.status < 300]

    def wait_for(self, predicate: Callable[[Receiver], bool], timeout_s: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.05)
        return predicate(self)
