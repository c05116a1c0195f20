"""Prometheus metrics of `firsttoken run` (served on /metrics by monitor.http.metrics).

Base units are seconds, as Prometheus expects; the histograms' buckets cover
what LLM APIs do (TTFT from 50 ms to a minute, decode 1 to 2,000 tokens/s).
Each service owns its registry, so tests can run several side by side.
"""

from __future__ import annotations

import logging
import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from monitor.agent.metrics_series import SeriesCounter, SeriesHistogram, _braces, chunked
from monitor.agent.metrics_window import WindowQuantiles
from monitor.sample import ErrorKind, Sample
from monitor.slo.good import judge_slos, slos_of

log = logging.getLogger(__name__)

LABELS = ("provider", "model", "region", "prompt", "agent")
GROUP_LABELS = ("provider", "region", "agent")  # the histograms' labels
TTFT_QUANTILES = (0.5, 0.9, 0.99)  # per target, over the last 5 minutes
TPS_QUANTILES = (0.1, 0.5, 0.9, 0.99)  # the slow tail of decode is its low quantiles
TTFT_BUCKETS_S = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 20, 30, 60)
TPS_BUCKETS = (1, 5, 10, 20, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000, 2000)
LAG_BUCKETS_S = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class ProbeMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        # Per target, a few series each (DESIGN: at most 2 KB a target at 5,000 targets): the probe
        # counter and the recent percentiles (monitor.agent.metrics_window), rendered by our own code,
        # which keeps a scrape cheap at thousands of targets.
        self.probes = SeriesCounter(
            "firsttoken_probes", "Probes by outcome", (*LABELS, "outcome", "error_kind"), created=False
        )
        self.target_ttft = WindowQuantiles(
            "firsttoken_target_ttft_seconds", "Time to first token over the last 5 minutes", LABELS, TTFT_QUANTILES
        )
        self.target_tps = WindowQuantiles(
            "firsttoken_target_decode_tokens_per_second",
            "Decode speed over the last 5 minutes, TTFT excluded",
            LABELS,
            TPS_QUANTILES,
        )
        # Distributions per provider region, where a histogram earns its keep (heatmaps, SLO burn).
        self.ttft = SeriesHistogram("firsttoken_ttft_seconds", "Time to first token", GROUP_LABELS, TTFT_BUCKETS_S)
        self.ttft_answer = SeriesHistogram(
            "firsttoken_ttft_answer_seconds", "Time to first answer token", GROUP_LABELS, TTFT_BUCKETS_S
        )
        self.total = SeriesHistogram(
            "firsttoken_total_seconds", "Time to the terminal event", GROUP_LABELS, TTFT_BUCKETS_S
        )
        self.tps = SeriesHistogram(
            "firsttoken_decode_tokens_per_second", "Decode speed, TTFT excluded", GROUP_LABELS, TPS_BUCKETS
        )
        self.route = RouteInfo()
        # Cache probes (DESIGN §13): the warm half's TTFT apart (firsttoken_ttft_seconds keeps the
        # cold half, comparable with every other probe), and the warm probes by hit or miss:
        # hit ratio = rate(firsttoken_cache_probes_total{hit="true"}) / rate(firsttoken_cache_probes_total).
        # Per target, but only cache-probe targets have series, so the per-target budget holds.
        self.warm_ttft = SeriesHistogram(
            "firsttoken_warm_ttft_seconds", "Time to first token of cache probes' warm half", LABELS, TTFT_BUCKETS_S
        )
        self.cache_probes = SeriesCounter(
            "firsttoken_cache_probes", "Warm cache probes by hit", (*LABELS, "hit"), created=False
        )
        # SLOs (DESIGN §12): every probe judged good or bad against each SLO it falls under, with the
        # SLO's own bounds, so `firsttoken slo rules` need no per-target histograms and no bucket
        # rounding: one or two series per target and SLO.
        self.slo_probes = SeriesCounter(
            "firsttoken_slo_probes", "Probes judged against each SLO's good:", ("slo", *LABELS, "good"), created=False
        )
        self._slos: tuple = ()
        self._slos_by_target: dict[str, tuple] = {}  # the SLOs matching each target, worked out once
        self.per_target = (
            self.probes,
            self.slo_probes,
            self.target_ttft,
            self.target_tps,
            self.ttft,
            self.ttft_answer,
            self.total,
            self.tps,
            self.route,
            self.warm_ttft,
            self.cache_probes,
        )
        self.sched_lag = Histogram(
            "firsttoken_sched_lag_seconds",
            "Probe start lateness against schedule",
            ("agent",),
            buckets=LAG_BUCKETS_S,
            registry=r,
        )
        self.queue_wait = Histogram(
            "firsttoken_queue_wait_seconds",
            "Time a ready probe waited for a concurrency cap (apart from sched_lag)",
            ("agent",),
            buckets=LAG_BUCKETS_S,
            registry=r,
        )
        route = ("provider", "region")
        self.route_cap = Gauge(
            "firsttoken_concurrency_cap", "Probes allowed in flight per provider region", route, registry=r
        )
        self.route_needed = Gauge(
            "firsttoken_concurrency_needed",
            "Probes in flight the schedule needs per provider region (rate x mean duration)",
            route,
            registry=r,
        )
        self.route_short = Gauge(
            "firsttoken_concurrency_short", "1 when a provider region's cap cannot keep its schedule", route, registry=r
        )
        self.targets = Gauge("firsttoken_targets", "Targets scheduled on this agent", registry=r)
        self.in_flight = Gauge("firsttoken_probes_in_flight", "Probes in flight", registry=r)
        self.queue_depth = Gauge("firsttoken_writer_queue_depth", "Samples waiting for the database", registry=r)
        self.spool_bytes = Gauge("firsttoken_spool_bytes", "Bytes of samples spooled to disk", registry=r)
        self.written = Gauge("firsttoken_samples_written", "Samples committed to the database", registry=r)
        self.dropped = Gauge("firsttoken_samples_dropped", "Samples lost to the spool size bound", registry=r)
        self.leader = Gauge("firsttoken_leader", "1 when this agent runs the once-only work", registry=r)
        self.config_reloads = Counter("firsttoken_config_reloads", "Config reloads", ("result",), registry=r)
        # Spend so far, from `prices:` (exposed as firsttoken_probe_cost_usd_total); per provider
        # and model, not per target: a cost dashboard sums them, and the label set stays small.
        self.cost = Counter(
            "firsttoken_probe_cost_usd",
            "What the probes cost, USD (input, cached input, output)",
            ("provider", "model"),
            registry=r,
        )
        # Prompt-cache tokens as responses state them, per provider and model like the cost.
        self.cache_tokens = Counter(
            "firsttoken_cache_tokens",
            "Prompt tokens read from (kind=read) or written to (kind=write) the provider's prompt cache",
            ("provider", "model", "kind"),
            registry=r,
        )

    def set_slos(self, slos) -> None:
        """The config's `slos:`, at start and after every reload."""
        self._slos = tuple(slos)
        self._slos_by_target = {}

    def observe(self, sample: Sample) -> None:
        labels = (sample.provider, sample.model, sample.region, sample.prompt, sample.agent)
        outcome = "ok" if sample.ok else "error"
        self.probes.inc((*labels, outcome, sample.error_kind or ""))
        if self._slos and sample.error_kind != ErrorKind.CANCELLED:  # a cancelled probe measured nothing
            mine = self._slos_by_target.get(sample.target)
            if mine is None:
                mine = self._slos_by_target[sample.target] = slos_of(self._slos, sample)
            for slo, good in judge_slos(mine, sample):
                self.slo_probes.inc((slo, *labels, "true" if good else "false"))
        if sample.sched_lag_ms is not None:
            self.sched_lag.labels(sample.agent).observe(sample.sched_lag_ms / 1000)
        if sample.queue_wait_ms is not None:
            self.queue_wait.labels(sample.agent).observe(sample.queue_wait_ms / 1000)
        self.route.observe(labels, sample)
        if sample.cost_usd:  # failed probes that generated tokens were billed too
            self.cost.labels(sample.provider, sample.model).inc(sample.cost_usd)
        for kind, count in (("read", sample.cache_read_tokens), ("write", sample.cache_write_tokens)):
            if count:
                self.cache_tokens.labels(sample.provider, sample.model, kind).inc(count)
        if not sample.ok:
            return  # failures count in availability, never in latency
        if sample.cache_state == "warm":
            if sample.cache_hit is not None:
                self.cache_probes.inc((*labels, "true" if sample.cache_hit else "false"))
            if sample.ttft_ms is not None:
                self.warm_ttft.observe(labels, sample.ttft_ms / 1000)
            return  # the latency families keep the cold half and every other probe
        group = (sample.provider, sample.region, sample.agent)
        if sample.ttft_ms is not None:
            self.ttft.observe(group, sample.ttft_ms / 1000)
            self.target_ttft.observe(labels, sample.ttft_ms / 1000)
        if sample.ttft_answer_ms is not None:
            self.ttft_answer.observe(group, sample.ttft_answer_ms / 1000)
        if sample.total_ms is not None:
            self.total.observe(group, sample.total_ms / 1000)
        if sample.tps is not None:
            self.tps.observe(group, sample.tps)
            self.target_tps.observe(labels, sample.tps)

    def chunks(self) -> list[bytes]:
        """The /metrics body in pieces of ~64 KB (see monitor.agent.metrics_series for why):
        prometheus_client's families, then the per-target ones."""
        return [generate_latest(self.registry), *(chunk for family in self.per_target for chunk in family.chunks())]

    def exposition(self) -> bytes:
        return b"".join(self.chunks())


class RouteInfo:
    """`firsttoken_route_info`: which upstream and build answered each target last.

    One series per target, value 1, its route labels replaced when the route
    changes (the old series disappears), so cardinality stays one per target
    however often a gateway flips. Only responses that name something update it.
    """

    NAME = "firsttoken_route_info"
    ROUTE_LABELS = ("served_by", "system_fingerprint", "model_version")

    def __init__(self) -> None:
        self._lines: dict[tuple[str, ...], bytes] = {}
        self._lock = threading.Lock()

    def observe(self, labels: tuple[str, ...], sample: Sample) -> None:
        route = (sample.served_by, sample.system_fingerprint, sample.model_version)
        if not any(route):
            return
        pairs = (*zip(LABELS, labels, strict=True), *zip(self.ROUTE_LABELS, (v or "" for v in route), strict=True))
        line = f"{self.NAME}{{{_braces(pairs)}}} 1.0\n".encode()
        with self._lock:
            self._lines[labels] = line

    def chunks(self) -> list[bytes]:
        with self._lock:
            lines = list(self._lines.values())
        if not lines:
            return []
        head = f"# HELP {self.NAME} Route the last response named (1 per target)\n# TYPE {self.NAME} gauge\n"
        return list(chunked([head.encode(), *lines]))
