"""The documentation site: a short README whose links resolve, generated references that cover
every key of the schema and every command and flag of the parser (mkdocs_hooks.py adds them to the
site; `make docs-build`, run by `make lint`, builds it with --strict), and pages that read as a
reference: none speaks of sessions, issue numbers, this repository's commits or engineers."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from monitor.cli import build_parser
from monitor.config.editor import json_schema
from monitor.reference import cli_page, config_page

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_one_screenful_of_pages_and_every_relative_link_resolves():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    targets = [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]
    assert len(targets) >= 10
    broken = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert broken == []
    assert "make demo" in text and "make test" in text and "docs/screenshots/" in text


def test_the_configuration_reference_covers_every_key_with_type_default_and_description():
    schema = json_schema()
    text = _hooks().GENERATED["reference/configuration.md"]()
    paths = config_page.key_paths(schema)
    assert len(paths) >= len(schema["properties"]) + sum(len(d.get("properties", {})) for d in schema["$defs"].values())
    rows = {line.split(" | ")[0].strip("| `"): line for line in text.splitlines() if line.startswith("| `")}
    missing = [p for p in paths if p not in rows]
    assert missing == []
    for path in ("providers.<name>.protocol", "notifiers[](type=webhook).secret", "defaults.interval"):
        assert path in rows
    protocol_row = rows["providers.<name>.protocol"]
    assert '"openai-chat"' in protocol_row and "wire protocol" in protocol_row
    assert "| 5m |" in rows["defaults.interval"]  # the default, in the file's own units


def test_the_command_line_reference_covers_every_subcommand_and_flag():
    parser = build_parser()
    text = _hooks().GENERATED["reference/command-line.md"]()
    flags = cli_page.command_flags(parser)
    assert {"run", "check-config", "silence add", "silence expire", "db"} <= set(flags)
    for command, names in flags.items():
        section = text.split(f"`firsttoken {command}` {{#")[1]
        section = section.split("\n#")[0]
        for name in names:
            assert f"`{name}`" in section, f"{command}: {name} missing"
    assert "--probe-workers" in text and "--with-real-providers" in text
    assert r"upgrade \| current" in text  # a positional's choices (`firsttoken db upgrade`)


def test_every_page_is_in_the_nav():
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    listed: list[str] = []

    def walk(items):
        for item in items:
            for value in item.values() if isinstance(item, dict) else [item]:
                walk(value) if isinstance(value, list) else listed.append(value)

    walk(config["nav"])
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert pages | set(_hooks().GENERATED) == set(listed)


def test_every_dashboard_page_has_a_screenshot_made_by_the_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("screenshots", ROOT / "docs" / "screenshots.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    pages = {p.stem for p in (ROOT / "dashboard" / "pages").glob("*.py")} - {"login", "__init__"}
    assert set(script.PAGES) == pages, "a new dashboard page: add it to docs/screenshots.py and run make screenshots"
    text = (ROOT / "docs" / "dashboard.md").read_text()
    for name in pages:
        image = ROOT / "docs" / "screenshots" / f"{name}.png"
        assert image.stat().st_size < 200_000 and f"(screenshots/{name}.png)" in text


def test_every_discovered_protocol_and_notifier_type_has_its_section():
    """The hand-written pages keep up with discovery: a new module needs its few lines of docs."""
    from monitor.config.notifiers import notifier_types
    from monitor.protocols import protocol_names

    def headings(page: str) -> set[str]:
        text = (ROOT / "docs" / page).read_text()
        return set(re.findall(r"^#{2,3} `([\w-]+)`", text, re.M))

    assert set(protocol_names()) - headings("protocols.md") == set()
    assert set(notifier_types()) - headings("alerting.md") == set()


# The docs are a reference: what, how, figures. History (who did what when, in which commit or for
# which issue) belongs in git and, if anywhere on the site, on one changelog page.
DIARY = re.compile(
    r"\b(?:this|the previous|previous|last|earlier|an earlier|next) session\b"
    r"|(?<!to )\bissues? #?\d+\b|\bPR #?\d+\b|\bpull request\b"
    r"|\b(?:other|another|the other) engineers?\b|\bcommit [0-9a-f]{7,40}\b"
    r"|\bthis (?:issue|PR)\b",
    re.I,
)
HEX_WORD = re.compile(r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")
CHANGELOG = "changelog.md"


def _commits(words: set[str]) -> set[str]:
    """Those of `words` that name a commit of this repository (a hex word alone may be a nonce or an ETag)."""
    found = set()
    for word in words:
        done = subprocess.run(["git", "cat-file", "-e", f"{word}^{{commit}}"], cwd=ROOT, capture_output=True)
        if done.returncode == 0:
            found.add(word)
    return found


def test_no_page_speaks_of_sessions_issues_commits_or_engineers():
    pages = [p for p in sorted((ROOT / "docs").rglob("*.md")) if p.name != CHANGELOG]
    assert len(pages) >= 30
    found = []
    for page in pages:
        text = page.read_text()
        name = page.relative_to(ROOT)
        found += [f"{name}: {m.group(0)!r}" for m in DIARY.finditer(text)]
        found += [f"{name}: commit {c}" for c in sorted(_commits(set(HEX_WORD.findall(text))))]
    assert found == [], "write these as reference (history goes to docs/changelog.md):\n" + "\n".join(found)


def test_the_diary_check_catches_what_it_is_for():
    for line in (
        "as the previous session found",
        "fixed in issue 37",
        "other engineers own it",
        "commit 0a1b2c3",
        "written for this issue",
    ):
        assert DIARY.search(line), line
    for line in ("a database session", "1.2 s to issue 500 requests", "target_session_attrs", "ClientSession"):
        assert not DIARY.search(line), line
    head = subprocess.run(["git", "rev-parse", "--short=9", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode == 0:
        assert _commits({head.stdout.strip(), "1a2b3c4d"}) == {head.stdout.strip()}
