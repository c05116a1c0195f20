"""Errors the command line turns into exit code 2, one line each."""

from __future__ import annotations


class UsageError(Exception):
    """Bad command-line usage."""


class ConfigurationError(Exception):
    """Bad configuration: every problem, one line each, with its path."""

    def __init__(self, errors: list[str], source: str | None = None) -> None:
        self.errors = list(errors)
        self.source = source
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        prefix = f"{self.source}: " if self.source else ""
        return [f"{prefix}{line}" for line in self.errors]
