"""`firsttoken slo rules`: Prometheus recording and alerting rules for the config's SLOs over
firsttoken's own /metrics, Sloth/Pyrra style (DESIGN §12), pure: SLOs in, a rules document out.

Series the rules need (they stay whatever else /metrics drops):
- `firsttoken_probes_total{provider,model,region,prompt,agent,outcome,error_kind}`: every probe;
  `outcome="error"` the failed ones; `error_kind="cancelled"` (the service stopped mid-probe) is
  no measurement and left out, `error_kind="assertion"` too under `checks: false`.
- for a bound on `ttft_ms`, `ttft_answer_ms`, `total_ms` or `tps`: `firsttoken_ttft_seconds`,
  `firsttoken_ttft_answer_seconds`, `firsttoken_total_seconds`, `firsttoken_decode_tokens_per_second`
  (`_bucket` and `_count`; ok probes only). A bound is read at a bucket boundary (`le`): one that
  is not on a boundary is moved to the nearest boundary on the strict side and said so in a
  comment, so the rules never report more good probes than there were.

Each window's error ratio is bad / all probes, summed over agents and the scope's labels; a probe
breaking several bounds is counted once per bound (as the rollups count it). The alerts are the
workbook's pairs scaled to the period, severity `page` and `ticket`, labelled `slo`. firsttoken's own
alerts also ask for a quorum of vantage points (DESIGN §11); these rules pool the agents.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from monitor.slo.windows import PAGE, TICKET, burn_windows, window_lengths
from monitor.units import format_duration

PROBES = "firsttoken_probes_total"
HISTOGRAMS = {
    "ttft_ms": ("firsttoken_ttft_seconds", 1000.0),
    "ttft_answer_ms": ("firsttoken_ttft_answer_seconds", 1000.0),
    "total_ms": ("firsttoken_total_seconds", 1000.0),
    "tps": ("firsttoken_decode_tokens_per_second", 1.0),
}
BY = {"target": "provider, model, region, prompt", "provider": "provider", "model": "model", "all": ""}
ALERT = "FirsttokenSloBurnRate"


def prom_duration(seconds: float) -> str:
    """A Prometheus duration: whole milliseconds, largest units first (`1h`, `1m10s`, `432ms`)."""
    return format_duration(round(seconds * 1000) / 1000)


def glob_regex(pattern: str) -> str:
    """A `match:` glob as an RE2 regex, anchored as PromQL's `=~` anchors it."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def selector(match, extra: Iterable[str] = ()) -> str:
    parts = []
    for label, pattern in sorted(match.items()):
        if set("*?[") & set(pattern):
            parts.append(f"{label}=~{_quote(glob_regex(pattern))}")
        else:
            parts.append(f"{label}={_quote(pattern)}")
    return "{" + ", ".join([*parts, *extra]) + "}"


def bucket_bound(metric: str, below: float | None, above: float | None, buckets: Sequence[float]) -> tuple[float, str]:
    """(the `le` to read, a note when it is not the configured bound) for one bound."""
    _name, scale = HISTOGRAMS[metric]
    wanted = (below if below is not None else above) / scale
    bounds = sorted(buckets)
    if any(abs(b - wanted) <= 1e-9 * max(1.0, wanted) for b in bounds):
        return wanted, ""
    if below is not None:  # good means <= le: take the boundary under the bound
        lower = [b for b in bounds if b < wanted]
        le = lower[-1] if lower else bounds[0]
    else:  # good means > le: take the boundary over the bound
        upper = [b for b in bounds if b > wanted]
        le = upper[0] if upper else bounds[-1]
    unit = "s" if scale == 1000.0 else " tokens/s"
    return le, f"{metric} bound {wanted:g}{unit} is not a bucket boundary of {HISTOGRAMS[metric][0]}: read at le={le:g}"


def _le_label(value: float) -> str:
    """The `le` label as prometheus_client writes it (`1.5`, `1.0`, `+Inf`)."""
    from prometheus_client.utils import floatToGoString

    return floatToGoString(value)


def record_name(kind: str, length_s: float) -> str:
    return f"firsttoken_slo:{kind}:rate{prom_duration(length_s)}"


def slo_rules(slos: Sequence, buckets: dict[str, Sequence[float]]) -> tuple[dict, list[str]]:
    """(the rules document, notes on bounds moved to bucket boundaries). `buckets`: metric -> its
    histogram's bucket boundaries in base units (seconds, tokens/s)."""
    groups, notes = [], []
    for slo in slos:
        by = BY[slo.per]
        group_by = f" by ({by})" if by else ""
        skipped = ["cancelled"] + ([] if slo.good.checks else ["assertion"])
        errors = selector(slo.match, ['outcome="error"', f'error_kind!~"{"|".join(skipped)}"'])
        everything = selector(slo.match, ['error_kind!="cancelled"'])
        rules = []
        for length in window_lengths(slo.period_s):
            w = prom_duration(length)
            total = f"sum{group_by} (rate({PROBES}{everything}[{w}]))"
            bad = [f"sum{group_by} (rate({PROBES}{errors}[{w}]))"]
            for metric, below, above in slo.good.bounds():
                name = HISTOGRAMS[metric][0]
                le, note = bucket_bound(metric, below, above, buckets[metric])
                if note and f"{slo.name}: {note}" not in notes:
                    notes.append(f"{slo.name}: {note}")
                bucket = f"{name}_bucket{selector(slo.match, [f'le={_quote(_le_label(le))}'])}"
                if below is not None:
                    over = f"sum{group_by} (rate({name}_count{selector(slo.match)}[{w}]) - ignoring(le) rate({bucket}[{w}]))"
                else:
                    over = f"sum{group_by} (rate({bucket}[{w}]))"
                bad.append(f"({over} or {total} * 0)")  # no ok probe yet: no histogram series, nothing over
            rules.append(
                {
                    "record": record_name("error_ratio", length),
                    "expr": f"clamp_max(({' + '.join(bad)}) / {total}, 1)",
                    "labels": {"slo": slo.name},
                }
            )
        budget = round(slo.error_budget, 12)
        for severity in (PAGE, TICKET):
            pairs = [w for w in burn_windows(slo.period_s) if w.severity == severity]
            expr = " or ".join(
                f"(({record_name('error_ratio', w.long_s)}{{slo={_quote(slo.name)}}} >= {w.factor:g} * {budget:g})"
                f" and ({record_name('error_ratio', w.short_s)}{{slo={_quote(slo.name)}}} >= {w.factor:g} * {budget:g}))"
                for w in pairs
            )
            rules.append(
                {
                    "alert": ALERT,
                    "expr": expr,
                    "labels": {"severity": severity, "slo": slo.name},
                    "annotations": {
                        "summary": f"SLO {slo.name} ({slo.objective * 100:g}% over {format_duration(slo.period_s)}) "
                        f"is burning its error budget fast enough to {severity}",
                    },
                }
            )
        groups.append({"name": f"firsttoken-slo-{slo.name}", "rules": rules})
    return {"groups": groups}, notes
