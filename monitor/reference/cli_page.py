"""The command-line reference, from `firsttoken`'s argument parser (`monitor.cli.build_parser`).

Pure apart from reading the parser: every subcommand (nested ones too: `silence add`) gets its
description, its usage line and a table of its arguments; `command_flags` lists what the page
must show, for the test that holds the page to the parser.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from monitor.reference.markdown import code, table

INTRO = """# Command-line reference

Every `firsttoken` command and flag, generated from the argument parser when the site is built
(`firsttoken COMMAND --help` prints the same). `python -m monitor` is the same program. Exit codes:
0 ok, 1 runtime failure, 2 bad configuration or usage. The overview is [Command line](../command-line.md).
"""


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not sub.description and helps.get(name):
                    sub.description = helps[name]  # `add_parser(help=…)` alone: the one line there is
                yield name, sub


def commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(`silence add`, its parser) for every command, depth first, in the parser's order."""
    for name, sub in _subcommands(parser):
        path = f"{prefix}{name}"
        yield path, sub
        yield from commands(sub, f"{path} ")


def _arguments(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        yield action


def _names(action: argparse.Action) -> str:
    return ", ".join(action.option_strings) if action.option_strings else (action.metavar or action.dest)


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "flag"
    if action.choices is not None:
        return " | ".join(map(str, action.choices))
    return str(action.metavar or action.dest.upper())


def _default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS):
        return "required" if action.required else ""
    return code(str(action.default))


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return parser._get_formatter()._expand_help(action) if action.help else ""


def command_flags(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """command path -> the option strings and positional names it takes."""
    return {path: [_names(a) for a in _arguments(sub)] for path, sub in commands(parser)}


def page(parser: argparse.ArgumentParser) -> str:
    prog = parser.prog
    out = [INTRO, "\n## Commands\n\n"]
    out.append(
        table(
            ("command", "does"), ((f"[`{prog} {p}`](#{_anchor(p)})", s.description or "") for p, s in commands(parser))
        )
    )
    out.append("\n## Options of every command\n\n")
    out.append(_arguments_table(parser))
    for path, sub in commands(parser):
        level = "#" * min(2 + path.count(" "), 4)
        out.append(f"\n{level} `{prog} {path}` {{#{_anchor(path)}}}\n\n{sub.description or ''}\n\n")
        out.append(f"```text\n{sub.format_usage().strip()}\n```\n\n")
        out.append(_arguments_table(sub))
    return "".join(out)


def _arguments_table(parser: argparse.ArgumentParser) -> str:
    actions = list(_arguments(parser))
    if not actions:
        return "No arguments.\n"
    rows = ((code(_names(a)), _value(a), _default(a), _help(parser, a)) for a in actions)
    return table(("argument", "value", "default", "description"), rows)


def _anchor(path: str) -> str:
    return "cmd-" + path.replace(" ", "-")
