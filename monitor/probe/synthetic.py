"""Long-context prompts by token count (`synthetic: {tokens, seed}`). Pure and deterministic.

The filler reads like a plain report (sentences built from a seeded choice of
templates and words), because a model's prefill time does not depend on what
the text says but some gateways and safety filters treat gibberish or one word
repeated differently from prose. Its size is counted in tiktoken `o200k_base`
tokens: filler plus question come to the asked number (±2%, in practice within
a few tokens); the nonce and the provider's chat template add their handful.
Built once per (tokens, seed) and question: a 32k filler takes ~0.1 s to count.
"""

from __future__ import annotations

import functools
import random
from dataclasses import replace

from monitor.probe.tokens import o200k
from monitor.protocols.base import Message

_SUBJECTS = (
    "The operations team",
    "The regional office",
    "Our support staff",
    "The night shift",
    "The planning group",
    "The warehouse in the north",
    "The finance department",
    "A small pilot group",
    "The field engineers",
    "The quality board",
    "The new supplier",
    "The river crossing crew",
    "The harbour authority",
    "The editors",
)
_VERBS = (
    "reviewed",
    "measured",
    "postponed",
    "documented",
    "compared",
    "simplified",
    "shipped",
    "tested",
    "discussed",
    "rebuilt",
    "counted",
    "approved",
    "questioned",
    "summarised",
    "moved",
    "inspected",
)
_OBJECTS = (
    "the delivery schedule",
    "the spring inventory",
    "the old billing process",
    "two hundred invoices",
    "the cooling system",
    "the training plan",
    "the customer survey",
    "the parking rules",
    "the backup routine",
    "the weekly report",
    "the budget for the autumn",
    "the safety checklist",
    "the route along the coast",
    "the opening hours",
    "the archive of letters",
    "the garden beside the main hall",
)
_TAILS = (
    "before the end of the month",
    "after a long meeting on Tuesday",
    "with more care than last year",
    "because the figures did not agree",
    "while the rain kept everyone inside",
    "at the request of the board",
    "without any major delay",
    "for the third time this season",
    "as the manual suggests",
    "so that the next team can start on time",
    "in spite of a short power cut",
    "together with the auditors",
)
_OPENERS = ("", "", "", "Later, ", "In March, ", "As expected, ", "Meanwhile, ", "On balance, ", "By noon, ")
_PARAGRAPH_SENTENCES = (4, 8)


def _sentence(rng: random.Random) -> str:
    opener = rng.choice(_OPENERS)
    subject = rng.choice(_SUBJECTS)
    if opener:
        subject = subject[0].lower() + subject[1:]
    return f"{opener}{subject} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} {rng.choice(_TAILS)}."


@functools.lru_cache(maxsize=32)
def filler(tokens: int, seed: int = 0) -> str:
    """Prose of `tokens` o200k_base tokens (to within the last word's few tokens)."""
    enc = o200k()
    rng = random.Random(seed)
    parts: list[str] = []
    chars = 0
    left = rng.randint(*_PARAGRAPH_SENTENCES)
    # English prose runs ~5 characters a token: write a little more than needed, then
    # cut the encoded text at exactly `tokens` and back to a word boundary.
    while chars < tokens * 6 + 64:
        piece = ("" if not parts else "\n\n" if left == 0 else " ") + _sentence(rng)
        if left == 0:
            left = rng.randint(*_PARAGRAPH_SENTENCES)
        left -= 1
        parts.append(piece)
        chars += len(piece)
    ids = enc.encode("".join(parts), disallowed_special=())
    text = enc.decode(ids[:tokens])
    cut = text.rfind(" ")
    return text[:cut] if len(ids) > tokens and cut > 0 else text


@functools.lru_cache(maxsize=64)
def _with_question(tokens: int, seed: int, question: str) -> str:
    question_tokens = len(o200k().encode("\n\n" + question, disallowed_special=()))
    return f"{filler(max(1, tokens - question_tokens), seed)}\n\n{question}"


def synthetic_messages(messages: tuple[Message, ...], tokens: int, seed: int) -> tuple[Message, ...]:
    """The prompt's messages with the filler put before the question (its first user message)."""
    for i, message in enumerate(messages):
        if message.role == "user":
            text = _with_question(tokens, seed, message.content)
            return (*messages[:i], replace(message, content=text), *messages[i + 1 :])
    return (*messages, Message("user", filler(tokens, seed)))
