"""/metrics at scale: bytes, series and render time per target, the per-target histograms of before
beside the per-target recent percentiles of now (issue 22), in one run.

    .venv/bin/python -m benchmarks.metrics_size [--targets 1000,5000] [--rounds 5]

Targets are shaped like benchmarks/soak.py's (10 providers x 4 regions x models, the soak's long
simulator model names, one prompt), each observed five times (five minutes at 1-minute probes).
A "steady" scrape follows a quarter of the targets probed again (15-second scrapes, 1-minute probes);
"gzip" is the body compressed as /metrics does when the scraper sends Accept-Encoding: gzip.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import time
import zlib
from datetime import UTC, datetime

from monitor.agent.metrics import LABELS, TPS_BUCKETS, TTFT_BUCKETS_S, ProbeMetrics, RouteInfo
from monitor.agent.metrics_series import SeriesCounter, SeriesHistogram
from monitor.http.metrics import gzip_chunks
from monitor.sample import Sample

PROVIDERS, REGIONS = 10, 4


class PerTargetHistograms:
    """/metrics as it was before issue 22: four histograms and a counter per target (with _created lines)."""

    def __init__(self) -> None:
        self.probes = SeriesCounter("firsttoken_probes", "Probes by outcome", (*LABELS, "outcome", "error_kind"))
        self.hists = [
            (field, scale, SeriesHistogram(name, name, LABELS, buckets))
            for field, scale, name, buckets in (
                ("ttft_ms", 1000, "firsttoken_ttft_seconds", TTFT_BUCKETS_S),
                ("ttft_answer_ms", 1000, "firsttoken_ttft_answer_seconds", TTFT_BUCKETS_S),
                ("total_ms", 1000, "firsttoken_total_seconds", TTFT_BUCKETS_S),
                ("tps", 1, "firsttoken_decode_tokens_per_second", TPS_BUCKETS),
            )
        ]
        self.route = RouteInfo()

    def observe(self, sample: Sample) -> None:
        labels = (sample.provider, sample.model, sample.region, sample.prompt, sample.agent)
        self.probes.inc((*labels, "ok", ""))
        self.route.observe(labels, sample)
        for field, scale, hist in self.hists:
            hist.observe(labels, getattr(sample, field) / scale)

    def chunks(self) -> list[bytes]:
        families = (self.probes, *(h for _, _, h in self.hists), self.route)
        return [chunk for family in families for chunk in family.chunks()]


def samples(n_targets: int, round_no: int) -> list[Sample]:
    per_route = -(-n_targets // (PROVIDERS * REGIONS))
    out = []
    now = datetime.now(UTC)
    for p in range(PROVIDERS):
        for r in range(REGIONS):
            for m in range(per_route):
                if len(out) == n_targets:
                    return out
                model = f"sim:ttft={80 + 7 * m}:itl=4:tokens={12 + m % 20}:jitter=0.2:output_tokens={12 + m}"
                ttft = 80 + 7 * m + round_no
                out.append(
                    Sample(target="", provider=f"p{p:02d}", model=model, region=f"r{r}", prompt="short",
                           started_at=now, ok=True, ttft_ms=ttft, ttft_answer_ms=ttft, total_ms=ttft + 60,
                           tps=40.0 + round_no, agent="soak", served_by=f"upstream-{r}")
                )  # fmt: skip
    return out


def scrape_ms(chunks_of) -> tuple[float, list[bytes]]:
    started = time.perf_counter()
    chunks = list(chunks_of())
    return (time.perf_counter() - started) * 1000, chunks


def measure(kind: str, n_targets: int, rounds: int) -> dict:
    metrics = PerTargetHistograms() if kind == "before" else ProbeMetrics()
    for round_no in range(5):
        for sample in samples(n_targets, round_no):
            metrics.observe(sample)
    first_ms, chunks = scrape_ms(metrics.chunks)
    body = b"".join(chunks)
    steady = []
    quarter = samples(n_targets, 5)[: n_targets // 4]
    for _ in range(rounds):
        for sample in quarter:
            metrics.observe(sample)
        steady.append(scrape_ms(metrics.chunks)[0])
    started = time.perf_counter()
    zipped = b"".join(gzip_chunks(chunks))
    gzip_ms = (time.perf_counter() - started) * 1000
    assert gzip.decompress(zipped) == body
    series = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
    return {
        "kind": kind,
        "targets": n_targets,
        "bytes_per_target": len(body) / n_targets,
        "series_per_target": series / n_targets,
        "first_scrape_ms": first_ms,
        "steady_scrape_ms": statistics.median(steady),
        "gzip_bytes_per_target": len(zipped) / n_targets,
        "gzip_ms": gzip_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default="1000,5000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"zlib {zlib.ZLIB_VERSION}; render times are CPU on this machine, median of {args.rounds} steady scrapes")
    head = f"{'layout':<8}{'targets':>8}{'B/target':>10}{'series/t':>10}{'first ms':>10}{'steady ms':>10}"
    print(head + f"{'gzip B/t':>10}{'gzip ms':>9}")
    for n in (int(x) for x in args.targets.split(",")):
        for kind in ("before", "after"):
            r = measure(kind, n, args.rounds)
            print(
                f"{kind:<8}{n:>8,}{r['bytes_per_target']:>10,.0f}{r['series_per_target']:>10.1f}"
                f"{r['first_scrape_ms']:>10.0f}{r['steady_scrape_ms']:>10.0f}"
                f"{r['gzip_bytes_per_target']:>10,.0f}{r['gzip_ms']:>9.0f}"
            )


if __name__ == "__main__":
    main()
