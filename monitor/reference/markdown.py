"""Markdown pieces shared by the generated pages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def cell(text: str) -> str:
    """One table cell: a pipe or a line break would end it early."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def code(text: str) -> str:
    """Inline code that survives a backtick inside."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"
