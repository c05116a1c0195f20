"""The environment-variable reference, from the registry in monitor.envvars.

Pure: the registry in, Markdown out. mkdocs_hooks.py adds the page as docs/environment.md.
"""

from __future__ import annotations

from collections.abc import Iterable

from monitor.envvars import REGISTRY, STANDARD, EnvVar
from monitor.reference.markdown import code, table

INTRO = """# Environment variables

Every `FIRSTTOKEN_*` variable firsttoken reads, generated from the registry in `monitor/envvars.py`
when the site is built; a test fails when the code reads a `FIRSTTOKEN_*` name the registry lacks.
The config file's own `${VAR}` references (API keys, webhook secrets) are whatever names you choose:
see [Configuration](configuration.md#secrets). Secret variables are masked wherever firsttoken
prints them and never stored. Which endpoint each secret guards: [Security](security.md).
"""

GROUPS = (
    ("service", "Service"),
    ("development", "Development and tests"),
    ("internal", "Internal"),
)


def _rows(variables: Iterable[EnvVar]):
    for v in variables:
        name = code(v.name) + (" (secret)" if v.secret else "")
        yield name, v.description, v.default, v.read_by


def page(registry: tuple[EnvVar, ...] = REGISTRY) -> str:
    out = [INTRO]
    for group, title in GROUPS:
        members = [v for v in registry if v.group == group]
        if members:
            out.append(f"\n## {title}\n\n")
            out.append(table(("variable", "what it sets", "unset", "read by"), _rows(members)))
    out.append("\n## Standard variables\n\nfirsttoken also honours these, as other tools do:\n\n")
    out.append(table(("variable", "effect"), ((code(n), e) for n, e in STANDARD)))
    return "".join(out)
