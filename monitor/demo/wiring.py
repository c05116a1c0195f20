"""Where the demo plugs into the rest of firsttoken: the alert engine and the dashboard.

Kept apart from the runner so the seams are in one place: the backfill
drives the production `AlertEngine` and `OutboxDelivery` with a simulated
`now`. Live, the service runs the leader's jobs (monitor.leader.jobs) like any
`firsttoken run`, at the timings of the demo config's `alerting:` block.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import subprocess
import sys
import threading
import webbrowser
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dashboard import launch as dashboard_launch


class SettableNow:
    """A `now()` for code that takes a clock callable, moved by the backfill."""

    def __init__(self, epoch_s: float = 0.0) -> None:
        self._now = datetime.fromtimestamp(epoch_s, UTC)

    def set(self, moment: datetime) -> None:
        self._now = moment

    def now(self) -> datetime:
        return self._now


class BackfillAlerts:
    """The alert engine and outbox in simulated time; notifications printed with their time.

    `evaluate(now)` is one leader round at `now`: evaluate, then deliver what
    became due. Log notifications go to `print_line`, prefixed with how long
    before the demo's start they happened, so they read as history.
    """

    def __init__(self, db_engine, config, print_line: Callable[[str], None], epoch_s: float) -> None:
        from monitor.alerts.engine import AlertEngine, options_for
        from monitor.alerts.outbox import OutboxDelivery

        self.db, self.config, self.print_line, self.epoch_s = db_engine, config, print_line, epoch_s
        self.clock = SettableNow(epoch_s)
        # The engine the config describes, as the live leader and `backtest --samples` build it.
        self.alerts = AlertEngine(options_for(config.alerting), clock=self.clock.now)
        self.delivery = OutboxDelivery(clock=self.clock.now, factory=self._notifier, budget_s=60.0)
        self.fired = self.resolved = 0

    def evaluate(self, now: datetime) -> None:
        self.clock.set(now)
        stats = self.alerts.evaluate(self.db, self.config, now)
        if stats.queued:  # the log notifier never fails, so nothing waits for a retry
            self.delivery.run(self.db, self.config)

    def finish(self, now: datetime) -> None:
        """A last round that checkpoints every detector, so the live engine resumes exactly here.

        Checkpoints are otherwise spaced in real seconds, which a backfill
        crosses only a few times in a day of simulated time.
        """
        options = self.alerts.options
        self.alerts.options = dataclasses.replace(options, checkpoint_every_s=0.0)
        try:
            self.evaluate(now)
        finally:
            self.alerts.options = options

    def _notifier(self, config, secrets=(), context=None):
        if config.type != "log":
            from monitor.alerts.notifiers import build_notifier

            return build_notifier(config, secrets, context)
        return _HistoryLog(config.name, self)


class _HistoryLog:
    """The log notifier's line, marked with when it happened in the backfilled history."""

    def __init__(self, name: str, owner: BackfillAlerts) -> None:
        self.name, self.owner = name, owner

    def send(self, body: dict[str, Any], *, event: str, delivery_id: str) -> None:
        from monitor.alerts.notifiers.log import format_line

        owner = self.owner
        if event == "firing":
            owner.fired += 1
        elif event == "resolved":
            owner.resolved += 1
        hours_ago = (owner.epoch_s - owner.clock.now().timestamp()) / 3600
        owner.print_line(f"  {hours_ago:5.1f} h ago  {format_line(body, event)}")

    def close(self) -> None:
        pass


# ---------------------------------------------------------------- dashboard
def start_dashboard(config_path: str, database_url: str, port: int, host: str, log_path: Path) -> subprocess.Popen:
    """Streamlit in the background, its chatter in `log_path`, out of the terminal's Ctrl-C.

    In its own session, the terminal's SIGINT does not reach it: the demo
    stops it itself, after the service, so the order of shutdown is ours.
    """
    with open(log_path, "wb") as log:
        return dashboard_launch.start_dashboard(
            config_path, database_url, port, host, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )


def log_tail(log_path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


async def wait_for_dashboard(process: subprocess.Popen, host: str, port: int, timeout_s: float, service_task) -> bool:
    """Poll until the dashboard answers; give up if it exits, the service stops, or time runs out."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline and not service_task.done():
        if process.poll() is not None:
            return False
        if await asyncio.to_thread(dashboard_launch.dashboard_healthy, port, host, 1.0):
            return True
        await asyncio.sleep(0.25)
    return False


def can_open_browser() -> bool:
    """Not on a Linux box without a display: `webbrowser` would start a text browser in our terminal."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def open_browser(url: str) -> None:
    if not can_open_browser():
        return

    # webbrowser may block while a browser starts: never hold up the service for it.
    def run() -> None:
        with contextlib.suppress(Exception):
            webbrowser.open(url, new=2)

    threading.Thread(target=run, name="open-browser", daemon=True).start()
