"""The simulator's faults and the error_kind each must be stored as (DESIGN §1), for every fault test."""

# Each fault, and the error_kind DESIGN §1 files it under (through openai-chat; protocol
# exceptions are listed in test_fault_kinds.py). tests/test_probe.py checks it covers every fault.
FAULT_KINDS = {
    "rate_limited": "rate_limited",
    "server_error": "server_error",
    "overloaded": "server_error",
    "auth": "auth",
    "client_error": "client_error",
    "echo_key": "auth",
    "hang": "timeout",
    "slow_headers": "timeout",  # headers after 5 s, past the 3 s ttft_timeout
    "reset": "truncated",
    "truncate": "truncated",
    "malformed": "protocol",
    "stream_error": "stream_error",
    "empty": "empty",
    "huge_line": "protocol",
    "invalid_utf8": "protocol",
    "html": "protocol",
    "html_502": "server_error",
    "trickle": "timeout",  # one byte per second: no token before the ttft_timeout
    "throttle_stream": "rate_limited",
}
