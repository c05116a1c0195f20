"""Hostile configuration and hostile bytes: always a clean answer, never a traceback.

Configs: exit 2 and one line per problem, each naming where it is, through
the real CLI (a subprocess sample) and through `monitor.cli.main` in-process
(hypothesis, for volume). The loader's own fuzzing is in tests/test_config.py;
this file drives the command line around it, the environment, and the
database URL.

Bytes: mutated recorded streams at every protocol parser, and arbitrary
HTTP responses at the whole probe over a real socket: always a result with
an error_kind (or ok), never an exception.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import socket
import socketserver
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor import cli
from monitor.config import load_config_text
from monitor.eventloop import run_async
from monitor.probe.replay import replay
from monitor.probe.runner import probe_target
from monitor.probe.transport.lanes import ClientLanes
from monitor.protocols import get_protocol, protocol_names
from monitor.sample import ErrorKind
from tests.config_helpers import DESIGN_ENV, DESIGN_EXAMPLE
from tests.faults.harness import cli as run_cli
from tests.protocols.recorded import FIXTURES
from tests.protocols.test_recorded_streams import PROTOCOL_OF_FOLDER

KINDS = {str(k) for k in ErrorKind}
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi", strict=True)
)
HOSTILE = {
    "malformed yaml": b"providers: [unclosed\n  - x: {\n",
    "tabs for indent": b"providers:\n\tx: 1\n",
    "wrong types": b"defaults: {interval: [1, 2], timeout: {a: 1}, max_concurrency: many}\nproviders: 5\nchecks: {x: 1}\n",
    "unknown keys": b"databse: x\nprovider: {}\nalerts: [{nmae: x}]\n",
    "huge values": (
        b"defaults: {interval: 1e308, timeout: 99999999999999999999999, max_concurrency: 99999999999999999999}\n"
        b"prompts: {p: {messages: [{role: user, content: hi}], max_tokens: 1e100}}\n"
    ),
    "path traversal": (
        b"prompts:\n  a: {file: ../../../../etc/passwd, max_tokens: 1}\n  b: {file: /etc/hostname, max_tokens: 1}\n"
        b"  c: {file: prompts/../../x.txt, max_tokens: 1}\n"
    ),
    "invalid urls": (
        b"providers:\n  x:\n    protocol: openai-chat\n    models: [m]\n    regions:\n"
        b"      a: ftp://host/v1\n      b: 'http://'\n      c: not a url\n      d: 'http://[::1'\n"
        b"notifiers: [{name: n, type: webhook, url: 'file:///etc/passwd'}]\n"
    ),
    "binary": b"\x00\xff\xfe\x00garbage\x80",
    "alias bomb": LAUGHS.encode(),
    "deep nesting": b"a: " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "unset variable": b"agent: ${FT_SURELY_NOT_SET}\n",
    "python object tag": b"agent: !!python/object/apply:os.system ['true']\n",
    "not a mapping": b"- just\n- a list\n",
}
# Several problems in one file: one line each, every one reported.
MULTI = {"invalid urls": 5, "path traversal": 3, "wrong types": 4, "unknown keys": 3}


def config_file(tmp_path: Path, name: str, data: bytes) -> Path:
    (tmp_path / "prompts").mkdir(exist_ok=True)
    path = tmp_path / (name.replace(" ", "-") + ".yaml")
    path.write_bytes(data)
    return path


def assert_config_errors(result_code: int, stderr: str, path: Path, at_least: int = 1) -> None:
    lines = stderr.strip().splitlines()
    assert result_code == 2, (result_code, stderr[-2000:])
    assert len(lines) >= at_least, stderr
    assert "Traceback" not in stderr
    assert all(line.startswith(f"{path}: ") for line in lines), stderr


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_check_config_subprocess(tmp_path, name):
    path = config_file(tmp_path, name, HOSTILE[name])
    result = run_cli("check-config", "--config", str(path), cwd=tmp_path)
    assert_config_errors(result.returncode, result.stderr, path, MULTI.get(name, 1))
    assert result.stdout == ""


@pytest.mark.parametrize("command", [["run"], ["probe", "--json"], ["samples"], ["db", "upgrade"]])
@pytest.mark.parametrize("name", ["malformed yaml", "path traversal", "invalid urls"])
def test_every_command_refuses_a_bad_config_the_same_way(tmp_path, name, command):
    path = config_file(tmp_path, name, HOSTILE[name])
    result = run_cli(*command, "--config", str(path), cwd=tmp_path)
    assert_config_errors(result.returncode, result.stderr, path, MULTI.get(name, 1))


BAD_DATABASE_URLS = [
    "mysql://u:sekrit-db-pw@h/x",  # unsupported
    "postgresql://u:sekrit-db-pw@h:port/x",  # not a port
    "postgresql://u:sekrit-db-pw@h:99999/x",  # out of range
    "postgresql://u:sekrit-db-pw@[::1/x",  # unclosed IPv6 bracket
    "postgresql://:@:/",  # regression: a ValueError about int() and exit 1
    "not a url",
]


@pytest.mark.parametrize("url", BAD_DATABASE_URLS)
def test_a_bad_database_url_is_a_config_error_everywhere(tmp_path, url):
    # Regression: check-config passed these, and run/samples/db failed at start
    # with exit 1 and SQLAlchemy's text ("invalid literal for int() …").
    path = config_file(tmp_path, "ok", b"agent: a\n")
    for command in (["check-config"], ["db", "upgrade"], ["samples"]):
        result = run_cli(*command, "--config", str(path), cwd=tmp_path, env={"FIRSTTOKEN_DATABASE_URL": url})
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, (command, result.returncode, result.stderr)
        assert "sekrit" not in result.stderr and "Traceback" not in result.stderr
        assert "FIRSTTOKEN_DATABASE_URL" in lines[0] or "database URL" in lines[0], lines


def test_a_runtime_failure_is_one_line_too(tmp_path):
    # Regression: `db upgrade` against an unreachable server printed three lines
    # (psycopg's hint and SQLAlchemy's "Background on this error" link).
    path = config_file(tmp_path, "ok", b"agent: a\n")
    result = run_cli(
        "db", "upgrade", "--config", str(path), env={"FIRSTTOKEN_DATABASE_URL": "postgresql://u:p@127.0.0.1:1/x"}
    )
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--listen", "nohost"],
        ["run", "--spool-max-bytes", "lots"],
        ["probe", "--repeat", "0"],
        ["probe", "--concurrency", "-3"],
        ["samples", "--since", "yesterday-ish"],
        ["frobnicate"],
        ["db", "drop-everything"],
        ["check-config", "--no-such-flag"],
    ],
)
def test_bad_usage_is_exit_2_in_one_line(tmp_path, argv):
    path = config_file(tmp_path, "ok", b"agent: a\n")
    result = run_cli(*argv, "--config", str(path), cwd=tmp_path)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


# ----------------------------------------------------- in-process, for volume
def main_check_config(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["check-config", "--config", str(path)])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    (base / "prompts").mkdir()
    (base / "prompts" / "rag-4k.txt").write_text("context " * 50)
    return base


@pytest.fixture
def design_env(monkeypatch):
    for name, value in DESIGN_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("FIRSTTOKEN_DATABASE_URL", raising=False)
    monkeypatch.delenv("FIRSTTOKEN_AGENT", raising=False)


_EDITS = st.lists(
    st.tuples(
        st.sampled_from(["insert", "delete", "replace"]),
        st.integers(0, len(DESIGN_EXAMPLE)),
        st.sampled_from(
            [
                ": ",
                "- ",
                "{",
                "}",
                "[",
                "]",
                "&a ",
                "*a",
                "!!binary ",
                "!!python/name:os.system",
                "${",
                "${X}",
                "\t",
                "\n",
                "'",
                '"',
                "#",
                "|",
                ">",
                "?",
                "%TAG",
                "---",
                "...",
                "\x00",
                "\ufeff",
                "é",
                "../../",
                "1e999",
                "-1",
                "http://",
                "://",
                ",",
            ]
        ),
    ),
    min_size=1,
    max_size=6,
)


def _mutate(text: str, edits) -> str:
    for op, at, piece in edits:
        at = min(at, len(text))
        if op == "insert":
            text = text[:at] + piece + text[at:]
        elif op == "delete":
            text = text[:at] + text[at + len(piece) :]
        else:
            text = text[:at] + piece + text[at + len(piece) :]
    return text


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=_EDITS)
def test_mutated_design_example_through_the_cli(fuzz_dir, design_env, edits):
    path = fuzz_dir / "firsttoken.yaml"
    path.write_text(_mutate(DESIGN_EXAMPLE, edits), encoding="utf-8", errors="surrogatepass")
    code, out, err = main_check_config(path)
    if code == 0:
        assert "TARGET" in out and err == ""
    else:
        assert_config_errors(code, err, path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400))
def test_random_bytes_as_a_config_through_the_cli(fuzz_dir, design_env, data):
    path = fuzz_dir / "firsttoken.yaml"
    path.write_bytes(data)
    code, _, err = main_check_config(path)
    if code != 0:
        assert_config_errors(code, err, path)


# ----------------------------------------------------------- protocol parsers
def _recorded() -> list[tuple[str, bytes]]:
    return [
        (PROTOCOL_OF_FOLDER[f.parent.name], f.read_bytes())
        for f in sorted(FIXTURES.glob("*/*"))
        if f.parent.name in PROTOCOL_OF_FOLDER
    ]


RECORDED = _recorded()


@settings(max_examples=400, deadline=None)
@given(
    case=st.sampled_from(range(len(RECORDED))),
    seed=st.integers(0, 2**32 - 1),
    flips=st.integers(0, 8),
    cut_at=st.one_of(st.none(), st.floats(0, 1)),
)
def test_mutated_recorded_streams_never_raise(case, seed, flips, cut_at):
    protocol_name, raw = RECORDED[case]
    rng = random.Random(seed)
    data = bytearray(raw)
    for _ in range(flips):  # flip, drop or insert bytes anywhere
        at = rng.randrange(len(data))
        action = rng.randrange(3)
        if action == 0:
            data[at] = rng.randrange(256)
        elif action == 1:
            del data[at]
        else:
            data.insert(at, rng.choice(b'{}[]":,\n\r\x00\xff'))
    if cut_at is not None:
        data = data[: int(len(data) * cut_at)]
    reads, pos, t = [], 0, 0
    while pos < len(data):  # random read sizes, as a socket would hand them out
        size = rng.randint(1, 600)
        reads.append((t, bytes(data[pos : pos + size])))
        pos, t = pos + size, t + 1_000_000
    result = replay(get_protocol(protocol_name), reads)
    assert result.error_kind is None or str(result.error_kind) in KINDS
    m = result.metrics
    if result.ok:
        assert m.ttft_ms is not None or m.output_tokens is not None
    assert m.output_tokens is None or m.output_tokens >= 0


# ------------------------------------------------ whole probe, arbitrary HTTP
class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


class RawServer:
    """Answers each connection with whatever `response` holds: pieces of bytes,
    then a clean close or a reset. Lets the probe meet any wire, not only a sane one."""

    def __init__(self) -> None:
        self.response: tuple[list[bytes], bool] = ([], False)
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                sock: socket.socket = self.request
                sock.settimeout(2)
                with contextlib.suppress(OSError):
                    sock.recv(65536)  # the request: one write from the probe's backend
                pieces, reset = owner.response
                try:
                    for piece in pieces:
                        sock.sendall(piece)
                    if reset:
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                except OSError:
                    pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def raw_server():
    server = RawServer()
    yield server
    server.close()


CONTENT_TYPES = ["text/event-stream", "application/x-ndjson", "application/vnd.amazon.eventstream", "text/html", ""]
_heads = st.one_of(
    st.builds(
        lambda status, ctype, chunked: (
            f"HTTP/1.1 {status} X\r\n"
            + (f"content-type: {ctype}\r\n" if ctype else "")
            + ("transfer-encoding: chunked\r\n" if chunked else "")
            + "\r\n"
        ).encode(),
        st.sampled_from([200, 200, 200, 201, 204, 301, 400, 401, 429, 500, 503, 529, 999]),
        st.sampled_from(CONTENT_TYPES),
        st.booleans(),
    ),
    st.binary(max_size=60),  # not even HTTP
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    protocol=st.sampled_from(protocol_names()),
    head=_heads,
    body=st.lists(
        st.binary(max_size=200) | st.sampled_from([b"data: {}\n\n", b"0\r\n\r\n", b'{"done":true}\n']), max_size=5
    ),
    reset=st.booleans(),
)
def test_any_http_response_gives_the_probe_a_sample(raw_server, tmp_path_factory, protocol, head, body, reset):
    raw_server.response = ([head, *body], reset)
    base = raw_server.url + ("/v1" if protocol in ("openai-chat", "openai-responses") else "")
    spec = {
        "providers": {"p": {"protocol": protocol, "api_key": "k-hostile", "regions": {"r": base}, "models": ["m"]}},
        "prompts": {"q": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}},
        "checks": [{"providers": ["p"], "prompts": ["q"], "ttft_timeout": "1s", "timeout": "2s"}],
    }
    (target,) = load_config_text(json.dumps(spec), base_dir=os.getcwd(), env={}).targets

    async def one():
        async with ClientLanes() as lanes, lanes.lane(target.base_url) as client:
            return await probe_target(client, target)

    sample = run_async(one())
    assert sample.ok or sample.error_kind in KINDS, sample
    assert sample.ok or sample.error_message
