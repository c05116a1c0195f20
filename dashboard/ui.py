"""Widgets and messages shared by the pages (Streamlit only; no SQL, no figures)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

import streamlit as st

from dashboard import data, urlstate
from monitor import fmt

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
    label = urlstate.bound(st.segmented_control, "Range", options, name="range", key=key, default=default)
    label = label or default
    return label, RANGES[label]


@dataclass(frozen=True)
class Window:
    label: str  # "24 h", or "12-01 09:40 → now" for a window from a link
    start: datetime
    end: datetime
    fixed: bool  # from ?from=&to= (an alert link), not a range ending now


def window_picker(key: str, now: datetime, default: str = "24 h", options: Sequence[str] = tuple(RANGES)) -> Window:
    """The page's time window: `?from=&to=` when the URL has them (alert links do), else the range
    picker's last `range` up to now. A fixed window offers a button back to the live ranges."""
    start, end = urlstate.window()
    if start is not None:
        shown_end = end or now
        label = f"{start:%m-%d %H:%M} → {'now' if end is None else f'{end:%m-%d %H:%M}'} UTC"
        c1, c2 = st.columns([3, 1])
        c1.markdown(f"**Window** {label}")
        if c2.button("Back to live ranges", key=f"{key}-live", icon=":material/update:"):
            urlstate.clear_window()
            st.rerun()
        return Window(label, start, shown_end, True)
    label, span = range_picker(key, default, options)
    return Window(label, now - span, now, False)


def target_filter(
    targets: Sequence[data.TargetRef],
    key: str,
    *,
    default_providers: Sequence[str] | None = None,
    max_models: int | None = None,
    prompt_one: bool = False,
) -> list[data.TargetRef]:
    """Provider / model / region / prompt pickers (kept in the URL); the targets that match all four."""
    cols = st.columns(4)
    providers = sorted({t.provider for t in targets})
    chosen_p = urlstate.bound(
        cols[0].multiselect, "Providers", providers, name="provider", key=f"{key}-p",
        default=list(default_providers or providers),
    )  # fmt: skip
    pool = [t for t in targets if t.provider in chosen_p]
    models = sorted({t.model for t in pool})
    chosen_m = urlstate.bound(
        cols[1].multiselect, "Models", models, name="model", key=f"{key}-m",
        default=models if max_models is None else models[:max_models], placeholder="all models",
    )  # fmt: skip
    regions = sorted({t.region for t in pool})
    chosen_r = urlstate.bound(
        cols[2].multiselect, "Regions", regions, name="region", key=f"{key}-r", default=regions,
        placeholder="all regions",
    )  # fmt: skip
    prompts = sorted({t.prompt for t in targets})
    if prompt_one:
        one = urlstate.bound(cols[3].selectbox, "Prompt", prompts, name="prompt", key=f"{key}-q",
                             default=prompts[0] if prompts else None)  # fmt: skip
        chosen_q = [one] if prompts else []
    else:
        chosen_q = urlstate.bound(
            cols[3].multiselect, "Prompts", prompts, name="prompt", key=f"{key}-q", default=prompts[:1],
            placeholder="all",
        )  # fmt: skip
    return [
        t
        for t in pool
        if (not chosen_m or t.model in chosen_m)
        and (not chosen_r or t.region in chosen_r)
        and (not chosen_q or t.prompt in chosen_q)
    ]


# Numbers for people: one module decides (monitor.fmt); these names keep the pages short.
ms, rate, pct, count, span = fmt.ms, fmt.tok_s, fmt.pct, fmt.count, fmt.span

usd = fmt.usd


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
