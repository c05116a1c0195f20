"""The words the simulated models say.

One simulated token is one word piece of plain English (a word with its
leading space, or a punctuation mark), so re-counting the streamed text with
a real tokenizer lands close to the reported token count, as it does for a
real model. The text cycles through a fixed paragraph: cheap and predictable.
"""

from __future__ import annotations

import re

ANSWER_TEXT = (
    "The time to first token measures how long a client waits before the model starts to answer. "
    "It depends on the queue in front of the model, the length of the prompt, and the network between "
    "the caller and the provider. Once the first token arrives, the rest of the answer streams at a steady "
    "pace, one small piece of text after another, until the model reaches the end of its reply or the "
    "limit set by the request."
)
REASONING_TEXT = (
    "The user wants a short answer about latency. I should explain what the first token means, why the "
    "queue and the prompt length matter, and keep the reply brief. Let me think about the clearest order "
    "for these points before I write the answer."
)

_PIECE = re.compile(r"\s?[\w']+|\s?[^\w\s]")


def _pieces(text: str) -> tuple[str, ...]:
    pieces = _PIECE.findall(text)
    # Joined end to start, the paragraph must read on: ". The", not ".The".
    if not pieces[0].startswith(" "):
        pieces[0] = " " + pieces[0]
    return tuple(pieces)


ANSWER_PIECES = _pieces(ANSWER_TEXT)
REASONING_PIECES = _pieces(REASONING_TEXT)


def token_text(pieces: tuple[str, ...], start: int, count: int) -> str:
    """Tokens `start .. start+count-1` of the cycled paragraph, as one string."""
    n = len(pieces)
    text = "".join(pieces[(start + i) % n] for i in range(count))
    # The very first token of a reply carries no leading space, as real ones do.
    return text[1:] if start == 0 and text.startswith(" ") else text
