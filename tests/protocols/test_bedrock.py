from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import struct
import sys
import zlib
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.protocols import bedrock, get_protocol
from monitor.protocols.base import Message, ProbeRequest

from .recorded import (
    FIXTURES,
    assert_robust,
    bedrock_event,
    bedrock_exception,
    cut,
    eventstream_frame,
    json_values,
    replay_stamped,
    text_by_kind,
)

PROTOCOL = get_protocol("bedrock-converse")
MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
ENDPOINT = "https://bedrock-runtime.eu-west-1.amazonaws.com"
AKID, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
FIXED_NOW = datetime.datetime(2025, 3, 4, 5, 6, 7)


def request(**kw) -> ProbeRequest:
    base = dict(
        base_url=ENDPOINT,
        model=MODEL,
        messages=(Message("system", "Be brief."), Message("user", "TTFT?")),
        max_tokens=64,
        region="eu-west-1",
    )
    return ProbeRequest(**(base | kw))


@pytest.fixture
def aws(monkeypatch, tmp_path):
    """A credential chain with nothing in it but what a test puts there; a fixed clock."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda: FIXED_NOW)
    bedrock._session.cache_clear()
    yield monkeypatch, tmp_path
    bedrock._session.cache_clear()


# ------------------------------------------------------ SigV4, recomputed by hand
def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def sigv4(method, url, headers, body, secret, region, service, amz_date, double_encode=True) -> str:
    """AWS Signature Version 4 from its specification, without botocore."""
    parts = urlsplit(url)
    path = quote(parts.path, safe="/~") if double_encode else parts.path
    query = "&".join(sorted(parts.query.split("&"))) if parts.query else ""
    signed = {k.lower(): " ".join(v.split()) for k, v in headers.items() if k.lower() != "authorization"}
    signed.setdefault("host", parts.netloc)
    names = sorted(signed)
    canonical = "\n".join(
        [
            method,
            path,
            query,
            "".join(f"{n}:{signed[n]}\n" for n in names),
            ";".join(names),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{amz_date[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(f"AWS4{secret}".encode(), amz_date[:8])
    for part in (region, service, "aws4_request"):
        key = _hmac(key, part)
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def test_recomputation_matches_the_aws_test_suite_vector():
    # "get-vanilla" from the AWS SigV4 test suite (also shipped in botocore's own tests).
    headers = {"Host": "example.amazonaws.com", "X-Amz-Date": "20150830T123600Z"}
    signature = sigv4(
        "GET", "https://example.amazonaws.com/", headers, b"", SECRET, "us-east-1", "service", "20150830T123600Z"
    )
    assert signature == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"


def test_sigv4_signature_with_fixed_credentials_and_clock(aws):
    monkeypatch, _ = aws
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AKID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    http = PROTOCOL.build_request(request(headers={"x-route": "a  b"}))
    # the model id is a path segment: its ':' is percent-encoded on the wire, and again in the canonical URI
    assert http.url == f"{ENDPOINT}/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
    assert http.headers["X-Amz-Date"] == "20250304T050607Z"
    auth = http.headers["Authorization"]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={AKID}/20250304/eu-west-1/bedrock/aws4_request, ")
    assert "SignedHeaders=accept;content-type;host;x-amz-date;x-route, " in auth
    expected = sigv4("POST", http.url, http.headers, http.body, SECRET, "eu-west-1", "bedrock", "20250304T050607Z")
    assert auth.endswith(f"Signature={expected}")
    # tampering with the body breaks it
    assert (
        sigv4("POST", http.url, http.headers, http.body + b" ", SECRET, "eu-west-1", "bedrock", "20250304T050607Z")
        != expected
    )


def test_session_token_and_named_profile(aws):
    _, tmp_path = aws
    (tmp_path / "credentials").write_text(
        f"[probe]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = {SECRET}\naws_session_token = tok\n"
    )
    http = PROTOCOL.build_request(request(options={"aws_profile": "probe"}))
    assert http.headers["X-Amz-Security-Token"] == "tok"
    assert "Credential=AKIDPROFILE/" in http.headers["Authorization"]
    assert ";x-amz-security-token" in http.headers["Authorization"]
    expected = sigv4("POST", http.url, http.headers, http.body, SECRET, "eu-west-1", "bedrock", "20250304T050607Z")
    assert http.headers["Authorization"].endswith(expected)


def test_no_credentials_is_a_credentials_error(aws):
    with pytest.raises(Exception, match="credentials") as info:
        PROTOCOL.build_request(request())
    assert "Credential" in type(info.value).__name__  # the probe classifies it as `auth`


@pytest.mark.parametrize(
    ("base_url", "options", "region", "expected"),
    [
        ("https://bedrock-runtime.us-east-1.amazonaws.com", {}, "anything", "us-east-1"),
        ("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com", {}, "x", "us-gov-west-1"),
        ("https://vpce-1.bedrock-runtime.ap-southeast-2.vpce.amazonaws.com", {}, "x", "ap-southeast-2"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com", {"aws_region": "us-west-2"}, "x", "us-west-2"),
        ("http://127.0.0.1:8400", {}, "eu-central-1", "eu-central-1"),
    ],
)
def test_signing_region(base_url, options, region, expected):
    assert bedrock.signing_region(request(base_url=base_url, options=options, region=region)) == expected


def test_bedrock_api_key_is_a_bearer_token_and_body_shape():
    http = PROTOCOL.build_request(request(api_key="ABSK-secret", params={"inferenceConfig": {"temperature": 0}}))
    assert http.headers["authorization"] == "Bearer ABSK-secret"
    assert not any(h.lower().startswith("x-amz") for h in http.headers)
    assert json.loads(http.body) == {
        "messages": [{"role": "user", "content": [{"text": "TTFT?"}]}],
        "system": [{"text": "Be brief."}],
        "inferenceConfig": {"maxTokens": 64, "temperature": 0},
    }


def test_inference_profile_arn_is_one_path_segment():
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0"
    http = PROTOCOL.build_request(request(model=arn, api_key="k"))
    assert http.url.endswith(
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream"
    )


def test_config_errors(monkeypatch):
    assert PROTOCOL.config_errors({}, False) == []
    assert PROTOCOL.config_errors({"aws_region": 5, "aws_profile": ""}, False) == [
        "options.aws_region: must be a non-empty string",
        "options.aws_profile: must be a non-empty string",
    ]
    monkeypatch.setitem(sys.modules, "botocore.eventstream", None)  # as if the extra were not installed
    assert PROTOCOL.config_errors({}, True) == [
        "protocol: bedrock-converse needs the optional extra: pip install 'firsttoken[bedrock]'"
    ]


def test_headers_and_error_bodies():
    assert PROTOCOL.accepts_content_type("application/vnd.amazon.eventstream")
    assert not PROTOCOL.accepts_content_type("application/json")
    assert PROTOCOL.request_id({"x-amzn-requestid": "r-1"}) == "r-1"
    assert PROTOCOL.error_message(429, b'{"message":"Too many requests, please wait."}') == (
        "HTTP 429: Too many requests, please wait."
    )
    assert PROTOCOL.error_message(403, b'{"Message":"User is not authorized"}') == "HTTP 403: User is not authorized"


# ------------------------------------------------------------------- stream
START = bedrock_event("messageStart", {"role": "assistant", "p": "abc"})
STOP = bedrock_event("messageStop", {"stopReason": "end_turn"})
METADATA = bedrock_event(
    "metadata",
    {"usage": {"inputTokens": 13, "outputTokens": 5, "cacheReadInputTokens": 100}, "metrics": {"latencyMs": 321}},
)


def text(t: str) -> bytes:
    return bedrock_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}})


def test_stream_tokens_usage_and_latency():
    reasoning = bedrock_event("contentBlockDelta", {"delta": {"reasoningContent": {"text": "hmm"}}})
    signature = bedrock_event("contentBlockDelta", {"delta": {"reasoningContent": {"signature": "sig"}}})
    tool_start = bedrock_event("contentBlockStart", {"start": {"toolUse": {"toolUseId": "t1", "name": "lookup"}}})
    tool_input = bedrock_event("contentBlockDelta", {"delta": {"toolUse": {"input": '{"q":1}'}}})
    reads = [START, text(""), reasoning, signature, text("Hi"), tool_start, tool_input, STOP, METADATA]
    result = replay_stamped(PROTOCOL, reads)
    m = result.metrics
    assert result.ok
    assert (m.ttft_ms, m.ttft_answer_ms, m.total_ms) == (2, 4, 8)
    assert (m.output_tokens, m.input_tokens, m.cache_read_tokens) == (5, 113, 100)
    assert m.server_timing == {"latencyMs": 321}
    assert text_by_kind(PROTOCOL, reads) == {"reasoning": "hmm", "answer": "Hi", "tool": 'lookup{"q":1}'}


@pytest.mark.parametrize(
    ("exception", "kind"),
    [
        ("throttlingException", "rate_limited"),
        ("modelStreamErrorException", "stream_error"),
        ("internalServerException", "stream_error"),
        ("validationException", "stream_error"),
        ("serviceUnavailableException", "stream_error"),
    ],
)
def test_in_stream_exceptions(exception, kind):
    result = replay_stamped(PROTOCOL, [START, text("Hi"), bedrock_exception(exception, "it broke")])
    assert (str(result.error_kind), result.error_message) == (kind, f"{exception}: it broke")
    assert result.metrics.ttft_ms == 1


def test_error_message_type_frame():
    frame = eventstream_frame({":message-type": "error", ":error-code": "InternalFailure", ":error-message": "x"}, b"")
    result = replay_stamped(PROTOCOL, [START, frame])
    assert (str(result.error_kind), result.error_message) == ("stream_error", "InternalFailure: x")


def _corrupt(frame: bytes, at: int) -> bytes:
    return frame[:at] + bytes([frame[at] ^ 0xFF]) + frame[at + 1 :]


def test_frame_bounds_and_checksums():
    good = text("Hi")
    huge = struct.pack("!II", 17 << 20, 0)
    huge += struct.pack("!I", zlib.crc32(huge))
    tiny = struct.pack("!II", 8, 0)
    tiny += struct.pack("!I", zlib.crc32(tiny))
    cases = {
        "payload-crc": _corrupt(good, len(good) - 10),
        "message-crc": _corrupt(good, len(good) - 1),
        "prelude-crc": _corrupt(good, 9),
        "too-long": huge,  # rejected at once, not buffered while 17 MiB "arrive"
        "too-short": tiny,
        "bad-utf8": eventstream_frame({":message-type": "event", ":event-type": "contentBlockDelta"}, b"\xff{}"),
        "bad-json": eventstream_frame({":message-type": "event", ":event-type": "contentBlockDelta"}, b"{oops"),
    }
    for name, frame in cases.items():
        result = replay_stamped(PROTOCOL, [START, frame])
        assert str(result.error_kind) == "protocol", name


@pytest.mark.parametrize(
    ("reads", "kind"),
    [
        ([], "truncated"),
        ([START, text("Hi")], "truncated"),
        ([START, text("Hi"), METADATA[:30]], "truncated"),
        ([START, text(""), STOP, bedrock_event("metadata", {"usage": {"outputTokens": 0}})], "empty"),
    ],
    ids=["no-body", "no-metadata", "cut-frame", "no-token"],
)
def test_empty_and_truncated_streams(reads, kind):
    assert str(replay_stamped(PROTOCOL, reads).error_kind) == kind


def test_message_stop_without_metadata_still_finishes_with_an_estimate():
    result = replay_stamped(PROTOCOL, [START, text("Hello there"), STOP])
    assert result.ok and result.metrics.tokens_source == "estimate" and result.metrics.total_ms == 2


def test_recorded_frames_split_anywhere():
    raw = (FIXTURES / "bedrock" / "pydantic__pydantic-ai__converse_stream_claude_thinking.bin").read_bytes()
    for size in (1, 5, 13, 64):
        result = replay_stamped(PROTOCOL, [raw[i : i + size] for i in range(0, len(raw), size)])
        assert result.ok and result.metrics.output_tokens == 73


# --------------------------------------------------------------- robustness
VOCABULARY = [
    "delta", "text", "reasoningContent", "toolUse", "input", "start", "name", "stopReason", "usage", "metrics",
    "latencyMs", "inputTokens", "outputTokens", "cacheReadInputTokens", "message", "contentBlockIndex",
]  # fmt: skip
EVENT_TYPES = ["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.lists(st.integers(0, 10**6), max_size=6))
def test_random_bytes_never_raise(data, points):
    assert_robust(PROTOCOL, cut(data, points))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["event", "exception", "error", "other"]),
            st.sampled_from([*EVENT_TYPES, "throttlingException"]),
            json_values(VOCABULARY),
        ),
        max_size=6,
    ),
    st.lists(st.integers(0, 10**6), max_size=6),
)
def test_valid_frames_with_wrongly_typed_payloads_never_raise(frames, points):
    raw = b"".join(
        eventstream_frame(
            {":message-type": kind, ":event-type": name, ":exception-type": name}, json.dumps(payload).encode()
        )
        for kind, name, payload in frames
    )
    assert_robust(PROTOCOL, cut(raw, points))


def test_a_frame_over_a_mebibyte_is_refused_from_its_prelude():
    # Regression: 16 MiB frames were buffered and decoded whole; the simulator's
    # 10 MB frame stalled the event loop for half a second per probe.
    big = text("x" * (1 << 20))
    result = replay_stamped(PROTOCOL, [START, big[:12]])
    assert str(result.error_kind) == "protocol" and "out of bounds" in result.error_message
    assert replay_stamped(PROTOCOL, [START, text("x" * 200_000), STOP, METADATA]).ok
