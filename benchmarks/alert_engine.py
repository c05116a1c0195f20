"""Alert evaluation cost at fleet scale (DESIGN §9: 10,000 targets at 1-minute intervals).

    python benchmarks/alert_engine.py [--targets 10000] [--database URL] [--rounds 5]

Builds a config of N targets with a regression and a threshold rule, stores a
warm-up hour of samples, then times evaluation rounds the way the leader runs
them every 30 s: each round first stores one new sample per target for half
of the targets (a minute of probing seen every 30 s), then evaluates. Prints
a table: round, samples read, evaluations, seconds. The first round is the
cold start (every detector warms up on history); the rest are steady state.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.config import load_config_text
from monitor.sample import Sample
from monitor.storage import migrate
from monitor.storage.db import make_engine
from monitor.storage.queries import insert_samples


def build_config(n_targets: int, tmp: Path):
    providers, regions, prompts = 10, 5, 4
    models = max(1, n_targets // (providers * regions * prompts))
    spec = {
        "prompts": {
            f"p{i}": {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8} for i in range(prompts)
        },
        "providers": {
            f"prov{p}": {
                "protocol": "openai-chat",
                "regions": {f"r{r}": f"http://127.0.0.1:9/{p}/{r}/v1" for r in range(regions)},
                "models": [f"model-{m}" for m in range(models)],
            }
            for p in range(providers)
        },
        "checks": [
            {
                "providers": [f"prov{p}" for p in range(providers)],
                "prompts": [f"p{i}" for i in range(prompts)],
                "interval": "1m",
            }
        ],
        "alerts": [
            {"name": "ttft-regression", "metric": "ttft_ms", "kind": "regression", "min_change": "50%"},
            {"name": "errors", "metric": "error_rate", "kind": "threshold", "above": "20%", "window": "15m"},
        ],
        "notifiers": [{"name": "log", "type": "log"}],
    }
    return load_config_text(json.dumps(spec), base_dir=tmp, env={})


def samples_for(targets, at: datetime, rng: random.Random) -> list[Sample]:
    out = []
    for t in targets:
        ok = rng.random() > 0.02
        ttft = 300 * rng.lognormvariate(0, 0.2)
        out.append(
            Sample(
                target=t.id,
                provider=t.provider,
                model=t.model,
                region=t.region,
                prompt=t.prompt,
                started_at=at + timedelta(seconds=rng.random() * 30),
                ok=ok,
                error_kind=None if ok else "server_error",
                ttft_ms=ttft if ok else None,
                agent="bench",
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", type=int, default=10_000)
    parser.add_argument("--database", help="default: a temporary SQLite file")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--history-min", type=int, default=60)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    config = build_config(args.targets, tmp)
    targets = config.targets
    engine = make_engine(args.database or f"sqlite:///{tmp / 'bench.db'}")
    migrate.upgrade(engine)
    rng = random.Random(1)
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=args.history_min)
    t0 = time.perf_counter()
    for minute in range(args.history_min):
        insert_samples(engine, samples_for(targets, now + timedelta(minutes=minute), rng))
    now += timedelta(minutes=args.history_min)
    print(f"{len(targets)} targets x 2 rules; history {args.history_min} min stored in {time.perf_counter() - t0:.1f}s")
    alert_engine = AlertEngine(EngineOptions(settle_s=0.0))
    print(f"{'round':>5} {'samples':>8} {'evals':>8} {'seconds':>8}")
    for i in range(args.rounds):
        if i:
            now += timedelta(seconds=30)
            half = targets[(i % 2) :: 2]
            insert_samples(engine, samples_for(half, now - timedelta(seconds=30), rng))
        stats = alert_engine.evaluate(engine, config, now=now + timedelta(seconds=1))
        print(f"{i:>5} {stats.samples:>8} {stats.evaluations:>8} {stats.elapsed_s:>8.2f}")
    engine.dispose()


if __name__ == "__main__":
    main()
