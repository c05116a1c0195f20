"""A page's filters live in its URL: shareable, reloadable, and the back button works.

    providers = urlstate.bound(st.multiselect, "Providers", options, name="provider", key="trends-p",
                               default=options[:1])

`bound` creates the widget with its state taken from the query string and
writes the widget's value back. The URL is the truth whenever it changed from
outside (a shared link, a reload, the back button: Streamlit reruns the page
with the older query string); the widget is the truth when the reader changes
it. Only values that differ from the default are written, so a page opened
bare stays bare and the first visit adds no history entry the back button
would have to step over.

Lists are repeated keys (`?provider=a&provider=b`, `*` for all); booleans are `1`/`0`.
Values a page no longer offers (a target that left the config) are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import streamlit as st

ALL = "*"  # a list parameter's "every option" (alert links do not know the options)
_SEEN = "_urlstate_seen"  # key -> the query-string values this session last read or wrote for it


def _parse(raw: tuple[str, ...], default: Any, options: Sequence[Any] | None) -> Any:
    if isinstance(default, list | tuple):
        chosen = list(raw)
        if options is not None and chosen == [ALL]:
            return list(options)
        if options is not None:
            by_text = {str(o): o for o in options}
            chosen = [by_text[v] for v in chosen if v in by_text]
        return chosen
    text = raw[-1]
    if isinstance(default, bool):
        return text in ("1", "true", "yes")
    if options is not None:
        by_text = {str(o): o for o in options}
        return by_text.get(text, default)
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            return default
    return text


def _dump(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    if isinstance(value, bool):
        return ("1" if value else "0",)
    return () if value is None else (str(value),)


def read(name: str) -> tuple[str, ...]:
    return tuple(st.query_params.get_all(name))


def write(name: str, values: Sequence[str]) -> None:
    """Set (or, when empty, remove) one query parameter, only if it changes."""
    values = tuple(values)
    if read(name) == values:
        return
    if values:
        st.query_params[name] = list(values) if len(values) > 1 else values[0]
    else:
        del st.query_params[name]


def bound(
    widget: Callable[..., Any],
    label: str,
    options: Sequence[Any] | None = None,
    *,
    name: str,
    key: str,
    default: Any,
    **kwargs: Any,
) -> Any:
    """`widget(label, options, key=key, **kwargs)` with its value kept in `?name=`."""
    seen: dict[str, tuple[str, ...]] = st.session_state.setdefault(_SEEN, {})
    raw = read(name)
    if seen.get(key) != raw or key not in st.session_state:
        st.session_state[key] = _parse(raw, default, options) if raw else default
    elif options is not None:  # the offer changed under a kept value (another provider chosen, say)
        st.session_state[key] = _valid(st.session_state[key], default, options)
    args = (label,) if options is None else (label, list(options))
    value = widget(*args, key=key, **kwargs)
    now_raw = () if _same(value, default) else _dump(value)
    write(name, now_raw)
    seen[key] = now_raw
    return value


def _valid(value: Any, default: Any, options: Sequence[Any]) -> Any:
    offered = list(options)
    if isinstance(value, list | tuple):
        return [v for v in value if v in offered]
    return value if value in offered or value is None else default


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, list | tuple) and isinstance(value, list | tuple):
        return list(value) == list(default)
    return value == default


# --------------------------------------------------------------------------- time windows
TIME_FORMAT = "%Y-%m-%dT%H:%MZ"


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def parse_time(text: str) -> datetime | None:
    for pattern in (TIME_FORMAT, "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.strptime(text, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def window() -> tuple[datetime | None, datetime | None]:
    """`?from=&to=` (UTC, minutes): a fixed window, as alert links open; (None, None) when absent.
    `to` absent means "until now"."""
    start = parse_time(read("from")[-1]) if read("from") else None
    end = parse_time(read("to")[-1]) if read("to") else None
    if start is None or (end is not None and end <= start):
        return None, None
    return start, end


def clear_window() -> None:
    write("from", ())
    write("to", ())


def integer(name: str) -> int | None:
    raw = read(name)
    try:
        return int(raw[-1]) if raw else None
    except ValueError:
        return None
