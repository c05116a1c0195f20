"""The status site as bytes: every page and file, rendered from one `view.Site` and one snapshot.

One code path for both ways the site is published; they differ only in where the bytes go and in
how a page names another (`Layout`):

- SERVED: `run --listen` answers /status, /status/<provider> (monitor.http.statussite.serve), beside
  /status.json, /incidents.atom and /badge/<provider>.svg;
- EXPORTED: `firsttoken status export DIR` writes index.html, <provider>/index.html, status.json,
  incidents.atom and badge/<provider>.svg for any web server or CDN (and file://).

Links between pages are relative in both, so a site behind a path prefix or opened from disk holds
together. Templates (templates/*.j2) are autoescaped; the CSS is inlined, so a page is one request.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined

from monitor.http import public
from monitor.http.statussite import view

HTML, CSS = "text/html; charset=utf-8", "text/css"


@dataclass(frozen=True)
class Layout:
    """How a page links to the others: `up` leads from the page to the site's root."""

    exported: bool
    up: str = ""
    subscribe_url: str | None = None  # where the subscription form posts (None: no form)

    def at(self, depth: int) -> Layout:
        return Layout(self.exported, "../" * depth, self.subscribe_url)

    def home(self) -> str:
        return self.up + ("index.html" if self.exported else "status")

    def provider(self, name: str) -> str:
        return self.up + (f"{name}/index.html" if self.exported else f"status/{name}")

    def json(self) -> str:
        return self.up + "status.json"

    def feed(self) -> str:
        return self.up + "incidents.atom"

    def badge(self, name: str) -> str:
        return self.up + f"badge/{name}.svg"

    def subscribe(self) -> str | None:
        if self.subscribe_url is not None or self.exported:
            return self.subscribe_url
        return self.up + "status/subscribe"


SERVED = Layout(exported=False)


def exported(site_url: str | None) -> Layout:
    """A static copy: its form posts to the agent behind `status_site.url`, when there is one."""
    return Layout(exported=True, subscribe_url=f"{site_url.rstrip('/')}/status/subscribe" if site_url else None)


@cache
def environment() -> Environment:
    return Environment(
        loader=PackageLoader("monitor.http.statussite", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def css() -> str:
    return environment().loader.get_source(environment(), "status.css")[0]


def index_page(site: view.Site, layout: Layout) -> bytes:
    template = environment().get_template("index.html.j2")
    return template.render(site=site, links=layout.at(0), css=css()).encode()


def provider_page(site: view.Site, provider: view.Provider, layout: Layout) -> bytes:
    template = environment().get_template("provider.html.j2")
    return template.render(site=site, provider=provider, links=layout.at(1), css=css()).encode()


@dataclass(frozen=True)
class File:
    content_type: str
    body: bytes


def site_pages(site: view.Site, layout: Layout) -> dict[str, File]:
    """The HTML pages by their path under the root, in `layout`'s spelling (served: `status`,
    `status/<provider>`; exported: `index.html`, `<provider>/index.html`)."""
    pages = {("index.html" if layout.exported else "status"): File(HTML, index_page(site, layout))}
    for p in site.providers:
        path = f"{p.name}/index.html" if layout.exported else f"status/{p.name}"
        pages[path] = File(HTML, provider_page(site, p, layout))
    return pages


def site_files(site: view.Site, snapshot: public.Snapshot, layout: Layout) -> dict[str, File]:
    """Every file of the site: its pages, the JSON, the feed and each provider's badge."""
    pages = site_pages(site, layout)
    pages["status.json"] = File(public.JSON, public.status_json(snapshot))
    pages["incidents.atom"] = File(public.ATOM, public.atom_feed(snapshot))
    for p in site.providers:
        pages[f"badge/{p.name}.svg"] = File(public.SVG, public.badge_answer(snapshot, p.name)[2])
    return pages
