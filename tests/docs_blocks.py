"""The fenced blocks of a docs page, for the tests that run what a page shows."""

from __future__ import annotations

import re


def fenced(text: str, language: str) -> list[str]:
    """The bodies of the ```language blocks in `text`, in order."""
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def section(text: str, heading: str, next_heading: str | None = None) -> str:
    """From `heading` up to `next_heading` (or the end)."""
    start = text.index(heading)
    return text[start : text.index(next_heading, start) if next_heading else None]
