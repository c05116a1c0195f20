"""HTML to PDF with WeasyPrint (DESIGN §17): a real layout engine, no browser process.

WeasyPrint is imported when a PDF is asked for: it loads Pango through cffi, which costs about a
second and is needed by no other command. Charts are inlined by the templates as data: URLs, and
the fetcher allows nothing else, so rendering a report never reaches the network.
"""

from __future__ import annotations

import logging


class PdfUnavailable(RuntimeError):
    """WeasyPrint or the system libraries it needs (Pango) are missing."""


def html_to_pdf(html: str) -> bytes:
    # WeasyPrint logs each step at INFO, its import included ("Step 5 - Creating layout"): noise on a command's stderr.
    if not logging.getLogger().isEnabledFor(logging.DEBUG):
        logging.getLogger("weasyprint").setLevel(logging.WARNING)
    try:
        import weasyprint
        from weasyprint.urls import URLFetcher
    except (ImportError, OSError) as exc:  # OSError: Pango missing
        raise PdfUnavailable(f"PDF needs WeasyPrint and the system's Pango ({exc})") from None
    fetcher = URLFetcher(allowed_protocols=("data",))
    return weasyprint.HTML(string=html, url_fetcher=fetcher).write_pdf()
