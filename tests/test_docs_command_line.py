"""The Command line page (docs/command-line.md) lists every command of the argument parser, nested ones
too (`silence add`), each linked to its section of the generated reference; a command added to the
parser without a line there fails here."""

from __future__ import annotations

import re
from pathlib import Path

from monitor.cli import build_parser
from monitor.reference import cli_page

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "command-line.md").read_text()
ROW = re.compile(r"^\| \[`firsttoken ([a-z][\w -]*)`\]\(reference/command-line\.md#(cmd-[\w-]+)\) \| (.+) \|$", re.M)


def test_every_command_of_the_parser_has_a_line_linking_to_its_reference_section():
    commands = [path for path, _ in cli_page.commands(build_parser())]
    assert {"mcp", "silence add", "notify test", "routes", "db"} <= set(commands)
    rows = {m.group(1): m for m in ROW.finditer(PAGE)}
    missing = [c for c in commands if c not in rows]
    assert missing == [], f"add a line to docs/command-line.md for: {missing}"
    for command, m in rows.items():
        assert command in commands, f"docs/command-line.md lists `firsttoken {command}`, which the parser lacks"
        assert m.group(2) == cli_page._anchor(command)  # the anchor the reference page gives it
        assert len(m.group(3)) > 10


def test_the_flags_the_overview_names_exist():
    """A flag named on a command's line is one of that command's (or of one of its subcommands)."""
    flags = cli_page.command_flags(build_parser())
    for m in ROW.finditer(PAGE):
        command = m.group(1)
        known = {
            name
            for path, names in flags.items()
            if path == command or path.startswith(command + " ")
            for n in names
            for name in n.split(", ")
        }
        named = set(re.findall(r"`(--[a-z][\w-]*)", m.group(3)))
        assert named - known == set(), f"`firsttoken {command}`: {sorted(named - known)} not flags of it"
