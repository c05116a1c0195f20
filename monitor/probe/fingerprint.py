"""A fingerprint of a temperature-0 answer, to notice a model swapped behind its name. Pure.

Why only the first words, normalised: temperature 0 is not bit-deterministic at
any provider (batching and floating-point order change the logits slightly), so
two answers of the same model drift apart somewhere in the tail, and a
max_tokens cut moves the tail too. The opening of an answer is what one model
repeats and another model does not. Case and whitespace are folded (a
provider's streaming may split or re-space text), and the cache-busting nonce
is removed, since some models echo the `[1a2b3c4d]` prefix the probe adds.
The "tokens" are whitespace-separated words: every model has its own
tokenizer, and a fingerprint must compare across them.
"""

from __future__ import annotations

import hashlib
import json
import re

from monitor.probe.measure import Answer

FINGERPRINT_WORDS = 24
_NONCE = re.compile(r"\[[0-9a-f]{8}\]")


def answer_fingerprint(answer: Answer) -> str | None:
    """16 hex digits of SHA-256 over the normalised opening; None for an empty answer."""
    text = _NONCE.sub(" ", answer.text).casefold()
    words = text.split()[:FINGERPRINT_WORDS]
    if not words and answer.tool_calls:  # a tool-only answer: the call is the answer
        call = answer.tool_calls[0]
        words = [call.name, _canonical_arguments(call.arguments)]
    if not words:
        return None
    return hashlib.sha256(" ".join(words).encode()).hexdigest()[:16]


def _canonical_arguments(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return " ".join(arguments.split())
