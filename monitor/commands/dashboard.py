"""`firsttoken dashboard [--port 8501] [--host 127.0.0.1] [--no-browser] [--no-sign-in]`: the Streamlit app.

The child process is started and stopped by `dashboard.launch` (which `firsttoken demo` uses too).
Nothing is open to the network by default: bound beyond loopback with neither a password
(FIRSTTOKEN_DASHBOARD_PASSWORD) nor OIDC, it refuses to start (exit 2) unless `--no-sign-in` says
the openness is meant (a container whose port is published on loopback only, a private network).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import webbrowser

from dashboard.launch import DEFAULT_HOST, DEFAULT_PORT, start_dashboard, stop_process, wait_until_up
from monitor.commands import DEFAULT_CONFIG


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}; 0.0.0.0 for all)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    add_no_sign_in(p)


def add_no_sign_in(p: argparse.ArgumentParser) -> None:
    """`--no-sign-in`, shared with `firsttoken demo`."""
    p.add_argument(
        "--no-sign-in",
        action="store_true",
        help="serve the SRE pages with no sign-in on a non-loopback --host (without it, that needs "
        "FIRSTTOKEN_DASHBOARD_PASSWORD or OIDC)",
    )


def _exit_once(*_) -> None:
    """The first SIGTERM/SIGINT exits; later ones (the rest of a group's signals) must not cut the stop short."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    raise SystemExit(0)


def run(args: argparse.Namespace) -> int:
    from dashboard.settings import ENV_CONFIG, load_settings, sign_in_problem
    from monitor.storage.db import redact_url

    port, host = getattr(args, "port", DEFAULT_PORT), getattr(args, "host", DEFAULT_HOST)
    if problem := sign_in_problem(host, getattr(args, "no_sign_in", False)):
        print(f"firsttoken: {problem}", file=sys.stderr)
        return 2

    config = getattr(args, "config", DEFAULT_CONFIG)
    # The dashboard's own URL (a read-only role) wins, then FIRSTTOKEN_DATABASE_URL, then the
    # config; the config is read leniently: provider API keys need not be set for the dashboard.
    settings = load_settings({**os.environ, ENV_CONFIG: config})
    if settings.config_problem and os.path.exists(config):
        print(f"firsttoken: {settings.config_problem}", file=sys.stderr)
    url = settings.database_url
    # SIGTERM (docker stop, kill) and SIGINT must run the `finally` below, or Streamlit
    # outlives us; set explicitly, as a parent may have started us with SIGINT ignored.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_once)
    process = start_dashboard(config if os.path.exists(config) else None, url, port, host)
    try:
        if not wait_until_up(port, 60.0, host):
            code = process.poll()
            print(f"firsttoken: the dashboard did not start on {host}:{port} (exit {code})", file=sys.stderr)
            return 1
        shown = "localhost" if host in ("127.0.0.1", "0.0.0.0") else host
        print(f"dashboard on http://{shown}:{port}/ reading {redact_url(url)} (Ctrl-C stops it)", file=sys.stderr)
        if not getattr(args, "no_browser", False):
            webbrowser.open(f"http://{shown}:{port}/")
        return process.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop_process(process)
