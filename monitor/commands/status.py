"""`firsttoken status export DIR`: the status site (DESIGN §16) as static files, for any web server or CDN.

    firsttoken status export public/

writes what `firsttoken run --listen` serves at /status, rendered by the same code
(monitor.http.statussite.render) from the same database, in a layout that works from any static host and
from disk (file://):

    DIR/index.html               the overview (/status)
    DIR/<provider>/index.html    one page per provider (/status/<provider>)
    DIR/status.json              the Statuspage v2 summary
    DIR/incidents.atom           the incident feed
    DIR/badge/<provider>.svg     a badge per provider

Each file is replaced whole (written beside it, then renamed), so a web server reading DIR during an
export never serves half a page. Run it from cron, or after every deploy, and sync DIR to the CDN.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("export",), metavar="export", help="export: write the site as static files")
    p.add_argument("directory", metavar="DIR", help="where to write it (created if missing)")


def run(args: argparse.Namespace) -> int:
    from monitor.commands.db import SchemaNotReady, migrated_engine
    from monitor.config import load_config
    from monitor.http.statussite.render import exported, site_files
    from monitor.http.statussite.source import SiteSource

    config = load_config(args.config)
    try:
        with migrated_engine(args, read_only=True) as engine:
            snapshot, site = SiteSource(engine, lambda: config).read()
    except SchemaNotReady as exc:
        print(f"firsttoken: {exc}", file=sys.stderr)
        return 1
    files = site_files(site, snapshot, exported(site.url))
    root = Path(args.directory)
    for path, file in files.items():
        write_whole(root / path, file.body)
    pages = sum(1 for p in files if p.endswith(".html"))
    print(
        f"wrote {len(files)} files to {root}: {pages} pages, status.json, incidents.atom, {len(files) - pages - 2} badges"
    )
    return 0


def write_whole(path: Path, body: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.tmp")
    scratch.write_bytes(body)
    os.replace(scratch, path)
