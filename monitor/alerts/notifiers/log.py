"""`log`: one readable line per notification on stdout (the demo's notifier; no network)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, TextIO

from monitor.config.fields import spec
from monitor.config.notifiers import NotifierConfig


@spec(kw_only=True)
class LogNotifierConfig(NotifierConfig):
    type: ClassVar[str] = "log"


def format_line(body: Mapping[str, Any], event: str) -> str:
    status = "REPEAT" if event == "repeat" else str(body.get("status", "")).upper()
    return f"ALERT {status} #{body.get('alert_id')} [{body.get('severity')}] {body.get('summary')}"


class LogNotifier:
    def __init__(self, config: LogNotifierConfig, stream: TextIO | None = None) -> None:
        self.name = config.name
        self._stream = stream

    def send(self, body: Mapping[str, Any], *, event: str, delivery_id: str) -> None:
        stream = self._stream or sys.stdout
        print(format_line(body, event), file=stream, flush=True)

    def close(self) -> None:
        pass


def create(config: LogNotifierConfig, secrets: Iterable[str] = ()) -> LogNotifier:
    return LogNotifier(config)
