"""Widgets and messages shared by the pages (Streamlit only; no SQL, no figures)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TypeVar

import streamlit as st

from dashboard import data

T = TypeVar("T")
RANGES = {
    "1 h": timedelta(hours=1),
    "6 h": timedelta(hours=6),
    "24 h": timedelta(hours=24),
    "7 d": timedelta(days=7),
    "30 d": timedelta(days=30),
    "90 d": timedelta(days=90),
}
NO_SAMPLES = (
    "No samples in this database yet. Start the service with `firsttoken run` "
    "(or try `firsttoken demo`); this page fills in as probes are stored."
)


def _leave_legacy_pages_mode() -> None:
    """Streamlit treats a `pages/` folder beside the entry script as an old-style multipage app
    until the entry script has called `st.navigation` once in the process. A first visit straight
    to /alerts would then run the page alone: without app.py's navigation and, worse, without
    its access check. Switch to `st.navigation` mode and rerun through app.py."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def header(title: str, caption: str) -> None:
    """Every page starts here."""
    _leave_legacy_pages_mode()
    st.title(title)
    st.caption(caption)


def load(fn: Callable[..., T], *args, **kwargs) -> T:
    """Call a `data` loader; a database failure becomes a one-line error and stops the page."""
    try:
        return fn(*args, **kwargs)
    except data.Unavailable as exc:
        st.error(f"**The database is not answering.** {exc}", icon=":material/error:")
        st.stop()
        raise  # st.stop() raises; this keeps type checkers honest


def require_targets() -> list[data.TargetRef]:
    """Stop with a clear message when the database is missing, unmigrated or empty."""
    problem = data.schema_problem()
    if problem:
        st.warning(f"**No dashboard data:** {problem}", icon=":material/warning:")
        st.stop()
    targets = list(load(data.targets))
    if not targets:
        st.info(NO_SAMPLES, icon=":material/info:")
        st.stop()
    return targets


def range_picker(key: str, default: str = "24 h", options: Sequence[str] = tuple(RANGES)) -> tuple[str, timedelta]:
    label = st.segmented_control("Range", list(options), default=default, key=key) or default
    return label, RANGES[label]


def target_filter(
    targets: Sequence[data.TargetRef],
    key: str,
    *,
    default_providers: Sequence[str] | None = None,
    max_models: int | None = None,
    prompt_one: bool = False,
) -> list[data.TargetRef]:
    """Provider / model / region / prompt pickers; returns the targets that match all four."""
    cols = st.columns(4)
    providers = sorted({t.provider for t in targets})
    chosen_p = cols[0].multiselect("Providers", providers, default=list(default_providers or providers), key=f"{key}-p")
    pool = [t for t in targets if t.provider in chosen_p]
    models = sorted({t.model for t in pool})
    chosen_m = cols[1].multiselect(
        "Models",
        models,
        default=models if max_models is None else models[:max_models],
        key=f"{key}-m",
        placeholder="all models",
    )
    regions = sorted({t.region for t in pool})
    chosen_r = cols[2].multiselect("Regions", regions, default=regions, key=f"{key}-r", placeholder="all regions")
    prompts = sorted({t.prompt for t in targets})
    if prompt_one:
        chosen_q = [cols[3].selectbox("Prompt", prompts, key=f"{key}-q")] if prompts else []
    else:
        chosen_q = cols[3].multiselect("Prompts", prompts, default=prompts[:1], key=f"{key}-q", placeholder="all")
    return [
        t
        for t in pool
        if (not chosen_m or t.model in chosen_m)
        and (not chosen_r or t.region in chosen_r)
        and (not chosen_q or t.prompt in chosen_q)
    ]


def ms(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value / 1000:.2f} s" if value >= 10_000 else f"{value:,.0f} ms"


def rate(value: float | None) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:,.0f} tok/s"


def usd(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"


def pct(value: float | None, digits: int = 2) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.{digits}f}%"


def ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "never"
    seconds = max(0, (now - moment).total_seconds())
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h ago"
    return f"{seconds / 86400:.0f} days ago"
