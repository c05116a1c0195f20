"""The environment reference cannot fall behind the code: every `FIRSTTOKEN_*` name the shipped code
(monitor/, dashboard/) or the tests read is in monitor.envvars.REGISTRY, every registered name is
still read somewhere, and the generated page (docs/environment.md) lists each one."""

from __future__ import annotations

import re
from pathlib import Path

from monitor.envvars import NAMES, REGISTRY
from monitor.reference import env_page

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"\bFIRSTTOKEN_[A-Z][A-Z0-9_]*[A-Z0-9]\b")


def _names_in(*folders: str, exclude: tuple[Path, ...] = ()) -> dict[str, str]:
    found: dict[str, str] = {}
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path in exclude:
                continue
            for name in NAME.findall(path.read_text()):
                found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def test_every_variable_the_code_reads_is_registered():
    read = _names_in("monitor", "dashboard", exclude=(ROOT / "monitor" / "envvars.py",))
    assert {"FIRSTTOKEN_DATABASE_URL", "FIRSTTOKEN_CONFIG", "FIRSTTOKEN_MCP_TOKEN"} <= set(
        read
    )  # docstrings, dashboard
    missing = {name: where for name, where in read.items() if name not in NAMES}
    assert missing == {}, f"add these to monitor/envvars.py REGISTRY: {missing}"


def _constants_used() -> set[str]:
    """The registered names the code reads through their constant (`envvars.PARENT_PID`)."""
    import monitor.envvars as envvars

    constants = {attr: value for attr, value in vars(envvars).items() if isinstance(value, str) and value in NAMES}
    used = set()
    for folder in ("monitor", "dashboard"):
        for path in (ROOT / folder).rglob("*.py"):
            used |= {constants[a] for a in re.findall(r"\benvvars\.([A-Z_]+)\b", path.read_text()) if a in constants}
    return used


def test_every_registered_variable_is_still_read_somewhere():
    read = set(_names_in("monitor", "dashboard", "tests", exclude=(ROOT / "monitor" / "envvars.py",)))
    read |= set(NAME.findall((ROOT / "Makefile").read_text())) | _constants_used()
    assert NAMES - read == set(), "registered but read nowhere: drop them from REGISTRY"


def test_the_page_lists_every_variable_with_its_default():
    text = env_page.page()
    rows = {
        line.split(" | ")[0].strip("| ").split("`")[1]: line for line in text.splitlines() if line.startswith("| `")
    }
    assert set(rows) >= NAMES
    for var in REGISTRY:
        assert var.default.split("`")[0][:20] in rows[var.name]
        assert ("(secret)" in rows[var.name]) == var.secret
    assert "HTTPS_PROXY" in text  # the standard variables too


def test_the_service_reads_the_names_from_the_registry():
    """In monitor/ a FIRSTTOKEN_* name is spelled once, in monitor/envvars.py; the code reads the
    constant (`envvars.DATABASE_URL`), so a renamed variable cannot leave its page behind."""
    import ast

    spelled = []
    for path in sorted((ROOT / "monitor").rglob("*.py")):
        if path.name == "envvars.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
                spelled.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    assert spelled == [], "use the constant from monitor.envvars instead:\n" + "\n".join(spelled)
