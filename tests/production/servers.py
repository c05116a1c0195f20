"""Real servers from Debian for the production-deployment tests, started on loopback and stopped after.

PgBouncer (transaction pooling), tinyproxy (an egress proxy) and extra PostgreSQL
clusters (a primary and its streaming replica). Each runs in a temp dir of its own, on a
free port. PgBouncer and PostgreSQL refuse to run as root (CI is root): they run as the
`postgres` OS user then, and their temp dirs belong to it.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

from tests.net import free_port
from tests.pg import PG_HOST, PG_PORT, PG_USER

PG_BIN = Path(os.environ.get("FIRSTTOKEN_TEST_PGBIN", "/usr/lib/postgresql/15/bin"))


def need(binary: str) -> str:
    path = shutil.which(binary) or (f"/usr/sbin/{binary}" if Path(f"/usr/sbin/{binary}").exists() else None)
    # `make test` installs these (integration-deps); a missing one is a failure, never a skip.
    assert path, f"{binary} is not installed: run `make integration-deps`"
    return path


def _service_user() -> str | None:
    """The OS user servers run as: `postgres` when we are root, else ourselves (None)."""
    return "postgres" if os.geteuid() == 0 else None


def _as_service_user(argv: list[str]) -> list[str]:
    user = _service_user()
    return ["runuser", "-u", user, "--", *argv] if user else argv


def service_dir(prefix: str) -> Path:
    """A temp dir the service user owns (pytest's tmp_path is root's 0700 tree)."""
    path = Path(tempfile.mkdtemp(prefix=f"firsttoken-{prefix}-"))
    user = _service_user()
    if user:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)
    return path


def wait_port(port: int, timeout_s: float = 15.0, what: str = "server") -> None:
    import socket

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{what} did not listen on 127.0.0.1:{port} within {timeout_s:g}s")


class _Daemon:
    """A server run in the foreground as the service user, in its own directory, on `self.port`;
    `NAME` names its binary and its log file. Stopped and its directory removed on exit."""

    NAME = ""
    dir: Path
    port: int
    proc: subprocess.Popen | None

    def argv(self) -> list[str]:
        raise NotImplementedError

    def __enter__(self):
        self.proc = subprocess.Popen(
            _as_service_user(self.argv()), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_port(self.port, what=self.NAME)
        return self

    def log(self) -> str:
        path = self.dir / f"{self.NAME}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class PgBouncer(_Daemon):
    """PgBouncer in `pool_mode = transaction` in front of the suite's PostgreSQL, few server sessions,
    so consecutive transactions of one client land on different sessions (as on a busy managed pooler)."""

    NAME = "pgbouncer"

    def __init__(self, *, server_host: str = PG_HOST, server_port: int = PG_PORT, pool_size: int = 3) -> None:
        self.dir = service_dir("pgbouncer")
        self.port = free_port()
        (self.dir / "userlist.txt").write_text(f'"{PG_USER}" ""\n')
        (self.dir / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host={server_host} port={server_port}\n"
            "[pgbouncer]\n"
            "listen_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\n"
            "unix_socket_dir =\n"
            "auth_type = trust\n"
            f"auth_file = {self.dir / 'userlist.txt'}\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {pool_size}\n"
            "max_client_conn = 500\n"
            "server_reset_query =\n"
            "ignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self.dir / 'pgbouncer.log'}\n"
            f"pidfile = {self.dir / 'pgbouncer.pid'}\n"
        )
        user = _service_user()
        if user:
            for name in ("userlist.txt", "pgbouncer.ini"):
                shutil.chown(self.dir / name, user)
        self.proc: subprocess.Popen | None = None

    def url(self, dbname: str, **query: str) -> str:
        extra = "".join(f"&{k}={v}" for k, v in query.items())
        return f"postgresql+psycopg://{PG_USER}@127.0.0.1:{self.port}/{dbname}?sslmode=disable{extra}"

    def argv(self) -> list[str]:
        return [need("pgbouncer"), str(self.dir / "pgbouncer.ini")]


class Tinyproxy(_Daemon):
    """Debian's tinyproxy on loopback: plain HTTP forwarding and CONNECT tunnels, every request logged."""

    NAME = "tinyproxy"

    def __init__(self, *, basic_auth: tuple[str, str] | None = None) -> None:
        self.dir = service_dir("tinyproxy")
        self.port = free_port()
        self.basic_auth = basic_auth
        lines = [
            f"Port {self.port}",
            "Listen 127.0.0.1",
            "Timeout 60",
            "MaxClients 100",
            "LogLevel Info",
            f'LogFile "{self.dir / "tinyproxy.log"}"',
            f'PidFile "{self.dir / "tinyproxy.pid"}"',
            "Allow 127.0.0.1",
            "DisableViaHeader Yes",
        ]
        if basic_auth:
            lines.append(f"BasicAuth {basic_auth[0]} {basic_auth[1]}")
        (self.dir / "tinyproxy.conf").write_text("\n".join(lines) + "\n")
        user = _service_user()
        if user:
            shutil.chown(self.dir / "tinyproxy.conf", user)
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        return [need("tinyproxy"), "-d", "-c", str(self.dir / "tinyproxy.conf")]


class PgCluster:
    """A PostgreSQL cluster of its own (initdb, or pg_basebackup -R from a primary for a streaming
    replica), trust auth on loopback, stopped and removed at the end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dir = service_dir(f"pg-{name}")
        self.data = self.dir / "data"
        self.port = free_port()
        self.running = False

    def _run(self, *argv: str) -> None:
        subprocess.run(_as_service_user(list(argv)), check=True, capture_output=True, timeout=120)

    def init_primary(self) -> PgCluster:
        # --no-sync: a throwaway cluster needs no fsync of its files (seconds on a busy disk)
        self._run(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-U", PG_USER, "--auth=trust", "-E", "UTF8", "--no-sync"
        )
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(
                "listen_addresses = '127.0.0.1'\nunix_socket_directories = ''\n"
                "wal_level = replica\nmax_wal_senders = 5\nfsync = off\nshared_buffers = 32MB\n"
                "max_connections = 60\n"
            )
        with open(self.data / "pg_hba.conf", "a") as hba:
            hba.write(f"host replication {PG_USER} 127.0.0.1/32 trust\n")
        return self

    def init_replica_of(self, primary: PgCluster) -> PgCluster:
        self._run(
            str(PG_BIN / "pg_basebackup"),
            "-h", "127.0.0.1", "-p", str(primary.port), "-U", PG_USER,
            "-D", str(self.data), "-R", "-X", "stream",
            # An immediate checkpoint: the default (spread) one paces its writes over
            # checkpoint_completion_target of checkpoint_timeout, a minute and more of nothing.
            "--checkpoint=fast", "--no-sync",
        )  # fmt: skip
        return self

    def start(self) -> PgCluster:
        self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.dir / "server.log"),
            "-o", f"-p {self.port}", "-w", "-t", "60", "start",
        )  # fmt: skip
        self.running = True
        return self

    def stop(self, mode: str = "fast") -> None:
        if self.running:
            self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")
            self.running = False

    def promote(self) -> None:
        self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", "-t", "60", "promote")

    def connect(self, dbname: str = "postgres") -> psycopg.Connection:
        return psycopg.connect(host="127.0.0.1", port=self.port, user=PG_USER, dbname=dbname, autocommit=True)

    def url(self, dbname: str) -> str:
        return f"postgresql+psycopg://{PG_USER}@127.0.0.1:{self.port}/{dbname}"

    def close(self) -> None:
        with contextlib.suppress(Exception):  # already gone; the files go anyway
            self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)
