"""The design contract lives in the repository (docs/design.md, DESIGN §15): every section that code,
tests or docs cite as `DESIGN §N` is a `## N. Title` heading there, and the page keeps every section
of the shared design it is copied from (../shared/DESIGN.md beside the repository, where CI has it).

Citation forms: `DESIGN §12`, `DESIGN.md §3`, `DESIGN §1.2` (section 1), `DESIGN §§10`, lists
(`DESIGN §5, §11`, `… and §12`) and ranges (`DESIGN §10–§14`, `§10-14`: every section between).
A bare `§N` inside docs/design.md is a cross-reference within the design and must resolve too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "design.md"
SHARED = ROOT.parent / "shared" / "DESIGN.md"
# Where citations are looked for: the brief's five places and README, plus the other checked-in files
# that cite the design (migrations' docstrings, Makefile and pyproject comments).
ROOTS = ("monitor", "dashboard", "docs", "tests", "benchmarks", "migrations", "deploy", "examples")
FILES = ("README.md", "Makefile", "pyproject.toml", "mkdocs.yml", "mkdocs_hooks.py", "Dockerfile")
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis"}

HEADING = re.compile(r"^## (\d+)\. (.+?)\s*$", re.M)
# A section number: §12, §1.2 (section 1); a sentence's full stop after §12 is not part of it.
NUMBER = r"(\d+)(?:\.\d+)*"
# After the first: more sections (`, §11`, `and §12`, across a wrapped comment line) or a range's end
# (`–§14`, `-14`).
MORE = rf"(?:(?:\s|#)*(?:,|and|or|&)(?:\s|#)*§+\s*{NUMBER}|\s*[–—-]\s*§*\s*{NUMBER})"
CITATION = re.compile(rf"DESIGN(?:\.md)?\s*§+\s*{NUMBER}(?P<more>{MORE}*)")
PART = re.compile(rf"(?P<range>[–—-])?\s*§*\s*{NUMBER}")


def cited_sections(text: str) -> set[int]:
    """Every section number the `DESIGN §…` citations in `text` name, ranges expanded."""
    found: set[int] = set()
    for m in CITATION.finditer(text):
        numbers: list[int] = [int(m.group(1))]
        for part in PART.finditer(m.group("more")):
            n = int(part.group(2))
            if part.group("range") and n > numbers[-1]:
                numbers += range(numbers[-1] + 1, n)
            numbers.append(n)
        found.update(numbers)
    return found


def _texts():
    paths = [ROOT / name for name in FILES if (ROOT / name).is_file()]
    for root in ROOTS:
        paths += [p for p in sorted((ROOT / root).rglob("*")) if p.is_file() and not SKIP_DIRS & set(p.parts)]
    for path in paths:
        try:
            yield path, path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # screenshots and other binaries


def _headings(text: str) -> dict[int, str]:
    return {int(n): title for n, title in HEADING.findall(text)}


def _citations() -> dict[int, list[str]]:
    where: dict[int, list[str]] = {}
    for path, text in _texts():
        for m in CITATION.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            for section in cited_sections(m.group(0)):
                where.setdefault(section, []).append(f"{path.relative_to(ROOT)}:{line}")
    return where


@pytest.mark.parametrize(
    ("text", "sections"),
    [
        ("DESIGN" + " §12.", {12}),
        ("(DESIGN" + " §5, §11)", {5, 11}),
        ("DESIGN" + ".md §3, byte for byte", {3}),
        ("DESIGN" + " §1.2 says", {1}),
        ("DESIGN" + " §§10", {10}),
        ("DESIGN" + " §10–§14", {10, 11, 12, 13, 14}),
        ("DESIGN" + " §10-14", {10, 11, 12, 13, 14}),
        ("DESIGN" + " §8 and §13", {8, 13}),
        ("(DESIGN" + " §11,\n  # §12)", {11, 12}),
        ("DESIGN" + " §7: ≥ 2,000 targets, 5 cores", {7}),
        ("DESIGN" + ": at most 2 KB a target", set()),
        ("RFC 9110 §13.1.2", set()),
    ],
)
def test_citation_forms_are_read(text: str, sections: set[int]) -> None:
    assert cited_sections(text) == sections


def test_every_cited_section_is_a_heading_of_the_design_page():
    headings = _headings(PAGE.read_text())
    assert len(headings) >= 18 and sorted(headings) == list(range(1, max(headings) + 1))
    cited = _citations()
    assert sum(map(len, cited.values())) >= 100, "the citation pattern no longer finds the citations"
    missing = {n: places for n, places in sorted(cited.items()) if n not in headings}
    assert missing == {}, f"DESIGN sections cited but not in docs/design.md: {missing}"


def test_the_design_page_cross_references_resolve():
    text = PAGE.read_text()
    headings = _headings(text)
    referenced = {int(n) for n in re.findall(r"§+\s*(\d+)", text)}
    assert referenced and referenced - set(headings) == set()


def test_the_design_page_keeps_every_section_of_the_shared_design():
    if not SHARED.is_file():
        pytest.skip(f"{SHARED} is not beside the repository (CI has it there)")
    ours = _headings(PAGE.read_text())
    theirs = _headings(SHARED.read_text())
    assert theirs, f"no `## N. Title` headings in {SHARED}"
    missing = {n: title for n, title in theirs.items() if ours.get(n) != title}
    assert missing == {}, f"docs/design.md lacks (or renamed) these sections of the shared design: {missing}"
