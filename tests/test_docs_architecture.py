"""The architecture page's diagram is the code's import graph between its packages, arrow for arrow."""

from __future__ import annotations

import re
from itertools import product
from pathlib import Path

import grimp

PAGE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def _diagram() -> tuple[dict[str, list[str]], set[tuple[str, str]]]:
    text = PAGE.read_text()
    block = re.search(r"```mermaid\n(.*?)```", text, re.S).group(1)
    nodes = {m[0]: m[1].split(" + ") for m in re.findall(r'^\s*(\w+)\["([^"]+)"\]', block, re.M)}
    arrows = set()
    for left, right in re.findall(r"^\s*(\w+) --> (.+)$", block, re.M):
        arrows |= {(left, target.strip()) for target in right.split("&")}
    return nodes, arrows


def _modules(graph, packages: list[str]) -> set[str]:
    return {m for p in packages for m in {p, *graph.find_descendants(p)}}


def _imports(graph, importers: list[str], imported: list[str]) -> bool:
    """A module of `importers` (outside `imported`: alerts holds detectors) imports one of `imported`."""
    targets = _modules(graph, imported)
    sources = _modules(graph, importers) - targets
    return any(graph.find_modules_directly_imported_by(m) & targets for m in sources)


def test_every_arrow_is_an_import_and_every_import_an_arrow():
    nodes, arrows = _diagram()
    assert len(nodes) >= 10 and arrows
    graph = grimp.build_graph("monitor", "dashboard")
    drawn_but_absent = [(a, b) for a, b in sorted(arrows) if not _imports(graph, nodes[a], nodes[b])]
    assert drawn_but_absent == []

    real = {(a, b) for a, b in product(nodes, nodes) if a != b and _imports(graph, nodes[a], nodes[b])}
    assert real - arrows == set(), "imports missing from the diagram"


def test_the_pipeline_drawn_is_the_round_the_engine_runs():
    """DESIGN §15: the architecture page lists the round's stages in the order `round.STAGES` runs them."""
    from monitor.alerts.round import STAGES

    text = PAGE.read_text()
    block = text.split("## The alert pipeline", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    stages = [line for line in block.splitlines() if line.startswith("  ") and not line.startswith(("   ", "  round"))]
    drawn = [line.split()[0] for line in stages]
    assert drawn == [stage.__name__.removesuffix("_stage") for stage in STAGES]
