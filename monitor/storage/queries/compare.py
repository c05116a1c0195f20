"""Model-by-model statistics for the Compare page (the small-vs-flagship question).

One row per (provider, model, prompt), regions pooled: the same prompt is what
makes models comparable, and the prompt axis gives TTFT against prompt length.
The tiers follow `queries.tiers`: ranges shorter than a day read raw samples; longer ones the
rollups, whole days from the daily tier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlalchemy import Engine

from monitor.storage.queries.dashfetch import fetch_raw, fetch_tiers
from monitor.storage.queries.histmatrix import value_quantiles
from monitor.storage.queries.targets import TargetRef
from monitor.storage.queries.tierread import read_plan

QS = (0.1, 0.5, 0.9)


@dataclass(frozen=True)
class ModelStats:
    provider: str
    model: str
    prompt: str
    measured: int  # probes, cancelled left out
    failed: int
    ttft_p10_ms: float | None
    ttft_p50_ms: float | None
    ttft_p90_ms: float | None
    tps_p10: float | None
    tps_p50: float | None
    tps_p90: float | None
    input_tokens_mean: float | None  # per measured probe
    output_tokens_mean: float | None
    canonical_model: str = ""  # what this provider's model is compared as (`as:`), else the id

    @property
    def error_rate(self) -> float | None:
        return self.failed / self.measured if self.measured else None


def _f(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def compare(engine: Engine, targets: Sequence[TargetRef], start: datetime, end: datetime) -> list[ModelStats]:
    keys = sorted({(t.provider, t.model, t.prompt) for t in targets})
    key_index = {k: i for i, k in enumerate(keys)}
    of_target = {t.id: key_index[(t.provider, t.model, t.prompt)] for t in targets}
    canonical = {(t.provider, t.model): t.canonical for t in targets}
    n = len(keys)
    plan = read_plan(engine, start, end)
    if plan.raw is None:
        # One bucket spanning the whole range: a row per target of the hourly tier (and one per day).
        span_s = 3600 * (int((end - start).total_seconds() // 3600) + 2)
        rows = fetch_tiers(engine, plan, list(of_target), bucket_s=span_s)
        code = np.array([of_target[t] for t in rows.targets] or [0], dtype=np.int64)
        group = code[rows.target] if len(rows) else rows.target
        q_ttft = rows.quantiles("ttft_ms", group, n, QS)
        q_tps = rows.quantiles("tps", group, n, QS)
        measured = rows.samples - rows.cancelled
        failed = rows.samples - rows.ok - rows.cancelled
        tokens_in, tokens_out = rows.input_tokens, rows.output_tokens
    else:
        rows = fetch_raw(
            engine, start, end, list(of_target), metrics=("ttft_ms", "tps", "input_tokens", "output_tokens")
        )
        code = np.array([of_target[t] for t in rows.targets] or [0], dtype=np.int64)
        group = code[rows.target] if len(rows) else rows.target
        q_ttft, _ = value_quantiles(rows.metrics["ttft_ms"], group, n, QS)
        q_tps, _ = value_quantiles(rows.metrics["tps"], group, n, QS)
        measured = (~rows.cancelled).astype(np.int64)
        failed = (~rows.ok & ~rows.cancelled).astype(np.int64)
        tokens_in = np.nan_to_num(rows.metrics["input_tokens"])
        tokens_out = np.nan_to_num(rows.metrics["output_tokens"])
    m = np.bincount(group, weights=measured, minlength=n)
    f = np.bincount(group, weights=failed, minlength=n)
    t_in = np.bincount(group, weights=tokens_in, minlength=n)
    t_out = np.bincount(group, weights=tokens_out, minlength=n)
    out = []
    for (provider, model, prompt), i in key_index.items():
        per = m[i] if m[i] else np.nan
        out.append(
            ModelStats(
                provider,
                model,
                prompt,
                int(m[i]),
                int(f[i]),
                *(_f(v) for v in q_ttft[i]),
                *(_f(v) for v in q_tps[i]),
                _f(t_in[i] / per),
                _f(t_out[i] / per),
                canonical[(provider, model)],
            )
        )
    return out
