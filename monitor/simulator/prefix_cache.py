"""The simulated providers' prompt caches (DESIGN §13): which part of a prompt was seen before.

Two kinds, as at the real providers:
- automatic (OpenAI, Azure, Gemini, Ollama-style servers): any prompt is cached in blocks; a later
  prompt reuses its longest run of leading blocks seen before, once that run reaches the
  model's minimum (OpenAI: 1,024 tokens, then 128-token steps).
- explicit (Anthropic `cache_control`, Bedrock `cachePoint`): only the prefix a request marks is
  cached, and it is reused only whole; an unmarked prompt is never cached.

Prefixes are kept as hashes of cumulative blocks, so a lookup is one pass over the prompt, and
expire after `ttl_s` unused (Anthropic and OpenAI: about 5 minutes). Pure apart from the `now_s`
it is given; one per simulator, keyed by model and region as a provider's cache is.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

BLOCK_CHARS = 512  # ~128 o200k tokens of English prose: OpenAI's cache step
MAX_ENTRIES = 100_000  # prefixes kept; the oldest go first


@dataclass(frozen=True, slots=True)
class CacheUse:
    """What one request did with the cache, in characters of its prompt text."""

    read_chars: int = 0
    write_chars: int = 0


NO_USE = CacheUse()


class PrefixCache:
    def __init__(self, ttl_s: float = 300.0) -> None:
        self.ttl_s = ttl_s
        self._seen: OrderedDict[bytes, float] = OrderedDict()  # prefix hash -> last use (s)

    def automatic(self, scope: str, text: str, min_chars: int, now_s: float) -> CacheUse:
        """Read the longest cached run of leading blocks (at least `min_chars`), then cache every
        block boundary of `text` (the whole prompt is written, as OpenAI does, and states none)."""
        hashes = _block_hashes(scope, text)
        read_blocks = 0
        for i, h in enumerate(hashes):
            if not self._fresh(h, now_s):
                break
            read_blocks = i + 1
        read = min(read_blocks * BLOCK_CHARS, len(text))
        if read < min_chars:
            read = 0
        for h in hashes:
            self._touch(h, now_s)
        return CacheUse(read_chars=read, write_chars=0)

    def explicit(self, scope: str, prefix: str, min_chars: int, now_s: float) -> CacheUse:
        """A marked prefix: read whole if cached, else written (when long enough to be cached)."""
        if not prefix or len(prefix) < min_chars:
            return NO_USE
        h = _hash(scope, prefix)
        hit = self._fresh(h, now_s)
        self._touch(h, now_s)
        return CacheUse(read_chars=len(prefix)) if hit else CacheUse(write_chars=len(prefix))

    def clear(self) -> None:
        self._seen.clear()

    def _fresh(self, h: bytes, now_s: float) -> bool:
        at = self._seen.get(h)
        return at is not None and now_s - at <= self.ttl_s

    def _touch(self, h: bytes, now_s: float) -> None:
        self._seen[h] = now_s
        self._seen.move_to_end(h)
        while len(self._seen) > MAX_ENTRIES:
            self._seen.popitem(last=False)


def _hash(scope: str, text: str) -> bytes:
    return hashlib.blake2b(f"{scope}\x00{text}".encode(), digest_size=16).digest()


def _block_hashes(scope: str, text: str) -> list[bytes]:
    """The hash of each whole-block prefix of `text`, cumulatively (one pass)."""
    running = hashlib.blake2b(scope.encode() + b"\x00", digest_size=16)
    out = []
    for start in range(0, len(text) - BLOCK_CHARS + 1, BLOCK_CHARS):
        running.update(text[start : start + BLOCK_CHARS].encode())
        out.append(running.copy().digest())
    return out


def cache_tokens(
    cache: PrefixCache | None,
    explicit: bool,
    call,
    behaviour,
    scope: str,
    now_s: float,
    count_tokens,
) -> tuple[int, int]:
    """(tokens read from, tokens written to) the cache by one request; `count_tokens(text)`.

    `explicit`: the protocol caches only the prefix a request marks (`call.cache_prefix`).
    `behaviour.prompt_cache` false plays a cache that stopped hitting: nothing is read, and
    a marked prefix is written again every time, as a provider that lost it would bill it."""
    read, written = _cache_tokens(cache, explicit, call, behaviour, scope, now_s, count_tokens)
    # Counted apart, the prefix could exceed the prompt's own count by a token: never report more.
    prompt_tokens = count_tokens(call.prompt_text) if (read or written) else 0
    return min(read, prompt_tokens), min(written, prompt_tokens - min(read, prompt_tokens))


def _cache_tokens(cache, explicit, call, behaviour, scope, now_s, count_tokens) -> tuple[int, int]:
    if cache is None or not call.prompt_text:
        return 0, 0
    min_tokens = behaviour.cache_min_tokens
    if explicit:
        prefix = call.cache_prefix or ""
        tokens = count_tokens(prefix) if prefix else 0
        if tokens < min_tokens:
            return 0, 0
        use = cache.explicit(scope, prefix, 0, now_s)
        if not behaviour.prompt_cache:
            return 0, tokens
        return (tokens, 0) if use.read_chars else (0, tokens)
    use = cache.automatic(scope, call.prompt_text, 0, now_s)
    if not use.read_chars or not behaviour.prompt_cache:
        return 0, 0
    read = count_tokens(call.prompt_text[: use.read_chars])
    return (read, 0) if read >= min_tokens else (0, 0)
