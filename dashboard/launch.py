"""Start and stop the Streamlit app as a child process: used by `firsttoken dashboard` and `firsttoken demo`.

Streamlit runs as `python -m streamlit run <installed dashboard/app.py>`, headless and
without usage statistics. The child learns where to read from through the
environment: FIRSTTOKEN_CONFIG (the config's absolute path, for prices and links)
and FIRSTTOKEN_DASHBOARD_DATABASE_URL (resolved by the caller, so the dashboard
and the command agree on the database). Only the standard library: importing
this module does not import Streamlit.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from monitor import envvars
from monitor.childproc import child_env

DEFAULT_PORT = 8501
DEFAULT_HOST = "127.0.0.1"


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
        env[envvars.CONFIG] = str(Path(config_path).resolve())
    if database_url:
        env[envvars.DASHBOARD_DATABASE_URL] = database_url
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
        "monitor.childproc",  # Streamlit, ended by the kernel if this process dies without stopping it
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
    return subprocess.Popen(command, env=child_env(dashboard_env(config_path, database_url)), **popen_kwargs)


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
