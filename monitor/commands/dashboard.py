"""`firsttoken dashboard [--port 8501] [--host 127.0.0.1] [--no-browser]`: the Streamlit app.

Streamlit runs as a child process (`python -m streamlit run <installed dashboard/app.py>`),
headless and without usage statistics. The child learns where to read from
through the environment: FIRSTTOKEN_CONFIG (the config's absolute path, for
prices and links) and FIRSTTOKEN_DASHBOARD_DATABASE_URL (resolved here, so the
dashboard and the command agree on the database). `start_dashboard` and
`wait_until_up` are also what `firsttoken demo` uses.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import webbrowser
from pathlib import Path

DEFAULT_PORT = 8501
DEFAULT_HOST = "127.0.0.1"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to bind (default {DEFAULT_HOST}; 0.0.0.0 for all)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")


def app_path() -> Path:
    """The installed `dashboard/app.py` (works from a checkout and from site-packages)."""
    import dashboard

    # `__path__`, not `__file__`: an editable install made before the package existed maps it as a namespace.
    path = Path(next(iter(dashboard.__path__))).resolve() / "app.py"
    if not path.is_file():
        raise FileNotFoundError(f"dashboard app not found at {path}; the installation is incomplete")
    return path


def dashboard_env(config_path: str | os.PathLike | None, database_url: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if config_path is not None:
        env["FIRSTTOKEN_CONFIG"] = str(Path(config_path).resolve())
    if database_url:
        env["FIRSTTOKEN_DASHBOARD_DATABASE_URL"] = database_url
    # The app imports `dashboard.*`; make the package importable whatever the working directory.
    root = str(app_path().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    return env


def start_dashboard(
    config_path: str | os.PathLike | None,
    database_url: str | None,
    port: int = DEFAULT_PORT,
    host: str = DEFAULT_HOST,
    **popen_kwargs,
) -> subprocess.Popen:
    """Start Streamlit on `host:port` in the background; the caller stops it (terminate, wait)."""
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app_path()),
        "--server.port",
        str(port),
        "--server.address",
        host,
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--theme.base",
        "light",
        "--client.toolbarMode",
        "minimal",
    ]
    popen_kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.Popen(command, env=dashboard_env(config_path, database_url), **popen_kwargs)


def dashboard_healthy(port: int, host: str = DEFAULT_HOST, timeout_s: float = 2.0) -> bool:
    """Streamlit's own health endpoint answers 200 once the app server is up."""
    import httpx

    probe_host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    try:
        with socket.create_connection((probe_host, port), timeout=min(1.0, timeout_s)):
            pass
        return httpx.get(f"http://{probe_host}:{port}/_stcore/health", timeout=timeout_s).status_code == 200
    except (OSError, httpx.HTTPError):
        return False


def wait_until_up(port: int, timeout_s: float = 30.0, host: str = DEFAULT_HOST) -> bool:
    """True once Streamlit answers its health check on `host:port`, False after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if dashboard_healthy(port, host):
            return True
        time.sleep(0.25)
    return False


def stop_process(process: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after `timeout_s`; reaped either way."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _exit_once(*_) -> None:
    """The first SIGTERM/SIGINT exits; later ones (the rest of a group's signals) must not cut the stop short."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_IGN)
    raise SystemExit(0)


def run(args: argparse.Namespace) -> int:
    from dashboard.settings import ENV_CONFIG, load_settings
    from monitor.storage.db import redact_url

    config = getattr(args, "config", "firsttoken.yaml")
    # The dashboard's own URL (a read-only role) wins, then FIRSTTOKEN_DATABASE_URL, then the
    # config; the config is read leniently: provider API keys need not be set for the dashboard.
    settings = load_settings({**os.environ, ENV_CONFIG: config})
    if settings.config_problem and os.path.exists(config):
        print(f"firsttoken: {settings.config_problem}", file=sys.stderr)
    url = settings.database_url
    port, host = getattr(args, "port", DEFAULT_PORT), getattr(args, "host", DEFAULT_HOST)
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
