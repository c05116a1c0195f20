"""Recorded real streams with non-zero prompt-cache counts parse to the counts they state (DESIGN §13).

The expected numbers are read off the files by hand (tests/fixtures/cache_streams/SOURCES.md);
`input_tokens` is every prompt token, cached or not, whatever the protocol's own spelling.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from monitor.protocols import get_protocol

from .recorded import FIXTURES, replay_stamped, split_events

CACHE_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cache_streams"

# (folder, file, protocol, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens)
# fmt: off
CASES = [
    # Anthropic counts reads and writes outside input_tokens; two passes (compaction, message)
    # are summed from `iterations`: 100 + 55096 + 0 and 181 + 0 + 0.
    (CACHE_FIXTURES, "anthropic", "pydantic__pydantic-ai__sonnet46_compaction_cache_read.txt", "anthropic",
     100 + 55096 + 181, 55096, 0, 8),
    # OpenAI Responses: cached_tokens are inside input_tokens; no write count is stated.
    (CACHE_FIXTURES, "openai_responses", "pydantic__pydantic-ai__gpt-5_web_search_cached.txt", "openai-responses",
     9463, 8320, None, 582),
    (CACHE_FIXTURES, "openai_responses", "pydantic__pydantic-ai__deepseek_responses_cached.txt", "openai-responses",
     366, 256, None, 59),
    # OpenAI chat shape through OpenRouter: prompt_tokens_details.cached_tokens inside prompt_tokens.
    (CACHE_FIXTURES, "openai_compatible", "pydantic__pydantic-ai__openrouter_grok-4_cached.txt", "openai-chat",
     687, 679, None, 187),
    # llama.cpp: timings.cache_n reused + prompt_n evaluated.
    (FIXTURES, "openai_compatible", "unknown-repo__llamacpp_b6925_gpt-oss_tail_FRAGMENT.txt", "openai-chat",
     58 + 89, 89, None, 2188),
]
# fmt: on


@pytest.mark.parametrize(
    ("root", "folder", "file", "protocol", "inp", "read", "write", "out"), CASES, ids=[c[2] for c in CASES]
)
def test_recorded_stream_states_its_cache_counts(root, folder, file, protocol, inp, read, write, out):
    raw = (root / folder / file).read_bytes()
    result = replay_stamped(get_protocol(protocol), split_events(folder, raw))
    m = result.metrics
    assert (m.input_tokens, m.cache_read_tokens, m.cache_write_tokens, m.output_tokens) == (inp, read, write, out)
    assert m.finished


@pytest.mark.parametrize(
    ("root", "folder", "file", "protocol", "inp", "read", "write", "out"), CASES[:4], ids=[c[2] for c in CASES[:4]]
)
def test_byte_at_a_time_gives_the_same_cache_counts(root, folder, file, protocol, inp, read, write, out):
    raw = (root / folder / file).read_bytes()
    result = replay_stamped(get_protocol(protocol), [raw[i : i + 1] for i in range(len(raw))])
    assert (result.metrics.cache_read_tokens, result.metrics.cache_write_tokens) == (read, write)
