"""The metric names a PromQL expression reads: a small tokenizer, enough for dashboards and rules.

Strings, label matchers `{...}`, ranges and subqueries `[...]`, grouping clauses
(`by (...)`, `on (...)`, `group_left(...)`, ...) and numbers hold no metric name;
an identifier followed by `(` is a function or aggregation; what is left is a
metric name (colons allowed, as in recording rules). `{__name__="x"}` selectors
are read too.
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_NAME_MATCHER = re.compile(r'__name__\s*=\s*"([^"]+)"')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "inf", "nan", "by", "without", "on", "ignoring"})


def _strip_nested(text: str, open_: str, close: str) -> str:
    out, depth = [], 0
    for ch in text:
        if ch == open_:
            depth += 1
            out.append(" ")
        elif ch == close and depth:
            depth -= 1
            out.append(" ")
        elif depth:
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def metric_names(expr: str) -> set[str]:
    names = set(_NAME_MATCHER.findall(expr))
    text = _STRING.sub('""', expr)
    text = _strip_nested(text, "{", "}")
    text = _strip_nested(text, "[", "]")
    text = _GROUPING.sub(" ", text)
    text = re.sub(r"\$\{?\w+\}?", " ", text)  # Grafana variables left outside matchers
    text = re.sub(r"(?<![A-Za-z0-9_:])\d[\w.]*", " ", text)  # numbers, 1e3, durations
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or token.lower() in KEYWORDS:
            continue
        names.add(token)
    return names


def label_values_metric(query: str) -> str | None:
    """Grafana's `label_values(metric{...}, label)`: the metric it reads (None for `label_values(label)`)."""
    m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", query)
    return next(iter(metric_names(m.group(1))), None) if m else None
