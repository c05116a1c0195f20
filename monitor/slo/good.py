"""Is one probe good for an SLO: ok, and within every bound of its `good:` (DESIGN §12)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from monitor.config.selectors import scope_matches

ASSERTION = "assertion"  # monitor.sample.ErrorKind.ASSERTION: the answer failed the prompt's `expect:` checks


def is_good(good, ok: bool, error_kind: str | None, values: Mapping[str, float | None]) -> bool:
    """`good` is the SLO's `Good` (bounds and `checks`); `values` the probe's ttft_ms, ttft_answer_ms,
    total_ms and tps. A bound on a value the probe did not measure is not met."""
    if not ok and not (error_kind == ASSERTION and not good.checks):
        return False
    for metric, below, above in good.bounds():
        value = values.get(metric)
        if value is None:
            return False
        if below is not None and not value < below:
            return False
        if above is not None and not value > above:
            return False
    return True


def slos_of(slos: Iterable, sample) -> tuple:
    """The SLOs whose `match:` takes the sample's target (the same for every sample of a target)."""
    labels = {"provider": sample.provider, "model": sample.model, "region": sample.region, "prompt": sample.prompt}
    return tuple(slo for slo in slos if scope_matches(slo.match, **labels))


def judge_slos(slos: Iterable, sample) -> Iterator[tuple[str, bool]]:
    """(SLO name, good) for each of `slos` (those that take the sample's target: `slos_of`)."""
    values = {
        "ttft_ms": sample.ttft_ms,
        "ttft_answer_ms": sample.ttft_answer_ms,
        "total_ms": sample.total_ms,
        "tps": sample.tps,
    }
    for slo in slos:
        yield slo.name, is_good(slo.good, sample.ok, sample.error_kind, values)
