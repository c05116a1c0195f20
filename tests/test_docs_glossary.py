"""The glossary explains the jargon the pages use: every term the pages lean on has an entry, and a
main page that uses a term links it (to its glossary entry, or to the page that owns the topic)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# term (as written in prose) -> (glossary anchor, the page that owns the topic, if any)
TERMS = {
    r"CUSUM": ("cusum", None),
    r"effect gate": ("effect-gate", None),
    r"target-months?": ("target-month", None),
    r"fencing token": ("fencing-token", None),
    r"spool": ("spool", None),
    r"rollups?": ("rollup", None),
    r"route truth": ("route-truth", "routing.md"),
    r"quorum": ("quorum", "vantage-points.md"),
    r"vantage points?": ("vantage-point", "vantage-points.md"),
    r"burn rates?": ("burn-rate", "slos.md"),
    r"error budgets?": ("error-budget", "slos.md"),
    r"canonical model": ("canonical-model", "routing.md"),
    r"outbox": ("outbox", None),
    r"availability floor": ("availability-floor", "routing.md"),
}
MAIN = [
    "concepts.md",
    "configuration.md",
    "vantage-points.md",
    "slos.md",
    "routing.md",
    "routing-live.md",
    "dashboard.md",
    "status-site.md",
    "incidents.md",
    "notifications.md",
    "integrations.md",
    "prompt-caching.md",
    "probe-kinds.md",
]
CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.S | re.M)


def _entries() -> set[str]:
    """The glossary's anchors, as MkDocs makes them from its `###` headings."""
    text = (DOCS / "glossary.md").read_text()
    return {re.sub(r"[^\w]+", "-", h.lower()).strip("-") for h in re.findall(r"^### (.+)$", text, re.M)}


def test_every_term_has_a_glossary_entry():
    entries = _entries()
    assert len(entries) >= 25
    assert {anchor for anchor, _ in TERMS.values()} - entries == set()
    for extra in ("ticket", "leader", "inhibition", "ttft-tps-itl"):
        assert extra in entries


def test_main_pages_link_the_terms_they_use():
    unlinked = []
    for name in MAIN:
        text = (DOCS / name).read_text()
        prose = CODE.sub("", text)
        for term, (anchor, owner) in TERMS.items():
            if owner == name or not re.search(rf"(?<![\w/#-]){term}(?![\w-])", prose, re.I):
                continue
            if f"](glossary.md#{anchor})" not in text and not (owner and f"]({owner}" in text):
                unlinked.append(f"{name}: {term}")
    assert unlinked == [], "link the first use to the glossary (or the owner page):\n" + "\n".join(unlinked)
