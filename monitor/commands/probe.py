"""`firsttoken probe`: probe matching targets now and print the results."""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO
from urllib.parse import urlsplit

from monitor.errors import UsageError
from monitor.sample import Sample, outcome_label, write_json


def select_targets(targets: Sequence, pattern: str) -> list:
    return [t for t in targets if fnmatch.fnmatchcase(t.id, pattern)]


async def probe_many(
    targets: Sequence, *, repeat: int, concurrency: int, agent: str, secrets, on_sample, prices=None
) -> None:
    """Probe each target `repeat` times with at most `concurrency` in flight; `prices`: config.price."""
    # httpx and the probe load here, not at the top: every command's parser is built on each `firsttoken` call.
    from monitor.probe.cache_pair import probe_round
    from monitor.probe.transport.lanes import ClientLanes
    from monitor.probe.transport.lanes import warm_up as warm_up_network

    gate = asyncio.Semaphore(concurrency)
    await warm_up_network(tuple({urlsplit(t.base_url).hostname or "localhost" for t in targets}))
    async with ClientLanes() as lanes:

        async def one(target) -> None:
            async with gate, lanes.lane(target.base_url, target.proxy) as client:
                price = prices(target.provider, target.model) if prices else None
                round_samples = await probe_round(client, target, agent=agent, secrets=secrets, price=price)
            for sample in round_samples:  # a cache probe's cold/warm pair: both printed
                on_sample(sample)

        for _ in range(repeat):
            await asyncio.gather(*(one(t) for t in targets))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", default="*", help="glob over target ids, e.g. 'openai/*@global:short'")
    p.add_argument("--repeat", type=int, default=1, help="probes per target")
    p.add_argument("--concurrency", type=int, default=1, help="probes in flight at once")
    p.add_argument("--json", action="store_true", help="one JSON object per probe per line")
    p.add_argument("--store", action="store_true", help="also write the samples to the database")


def unset_credentials(targets: Sequence, unset_secrets: Mapping[str, Sequence[str]]) -> list[str]:
    """The unset `${VAR}`s among the credentials of the providers these targets call, one line each.

    Least privilege: a probe sends only its providers' keys (and proxies), never a notifier's
    secret, so only those must be set; `unset_secrets` maps a config path to its variables."""
    providers = {t.provider for t in targets}
    return [
        f"{path}: environment variable {name} is not set (probe sends it to {path.split('.')[1]})"
        for path, names in unset_secrets.items()
        if path.startswith("providers.") and path.split(".")[1] in providers
        for name in names
    ]


def run(args: argparse.Namespace) -> int:
    from monitor.config import DEFER, ConfigError, load_config
    from monitor.eventloop import run_async
    from monitor.probe.tokens import warm_up

    if args.repeat < 1 or args.concurrency < 1:
        raise UsageError("firsttoken probe: --repeat and --concurrency must be at least 1")
    config = load_config(args.config, secrets=DEFER)  # notifiers' secrets: probe notifies no one
    targets = select_targets(config.targets_for_agent(config.agent), args.target)
    if not targets:
        raise UsageError(f"firsttoken probe: no target matches {args.target!r}")
    if missing := unset_credentials(targets, config.unset_secrets):
        raise ConfigError(missing, args.config)
    warm_up()
    samples: list[Sample] = []
    printer = JsonPrinter(sys.stdout) if args.json else TablePrinter(sys.stdout)

    def on_sample(sample: Sample) -> None:
        samples.append(sample)
        printer.add(sample)

    run_async(
        probe_many(
            targets,
            repeat=args.repeat,
            concurrency=args.concurrency,
            agent=config.agent,
            secrets=config.secrets,
            on_sample=on_sample,
            prices=config.price,
        )
    )
    printer.finish()
    if args.store:
        from monitor.storage.store import store_samples

        store_samples(config.database_url, samples)
    return 0 if any(s.ok for s in samples) else 1


class JsonPrinter:
    def __init__(self, out: TextIO) -> None:
        self.out = out

    def add(self, sample: Sample) -> None:
        write_json((sample,), self.out)
        self.out.flush()

    def finish(self) -> None:
        pass


COLUMNS = (
    ("target", 44),
    ("result", 14),
    ("ttfb_ms", 8),
    ("ttft_ms", 8),
    ("answer_ms", 9),
    ("total_ms", 9),
    ("tokens", 9),
    ("tps", 7),
    ("http", 4),
    ("cached", 8),  # cache_read_tokens; a cache probe's target says cold or warm (DESIGN §13)
)


class TablePrinter:
    """Rows print as probes finish, so a long run shows progress."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.errors: list[tuple[str, str]] = []
        self.out.write("  ".join(name.ljust(width) for name, width in COLUMNS).rstrip() + "\n")

    def add(self, sample: Sample) -> None:
        tokens = (
            ""
            if sample.output_tokens is None
            else f"{sample.output_tokens}{'~' if sample.tokens_source == 'estimate' else ''}"
        )
        cells = (
            sample.target if sample.cache_state is None else f"{sample.target} {sample.cache_state}",
            outcome_label(sample),
            _num(sample.ttfb_ms),
            _num(sample.ttft_ms),
            _num(sample.ttft_answer_ms),
            _num(sample.total_ms),
            tokens,
            _num(sample.tps),
            "" if sample.http_status is None else str(sample.http_status),
            "" if sample.cache_read_tokens is None else str(sample.cache_read_tokens),
        )
        line = "  ".join(str(cell).ljust(width) for cell, (_, width) in zip(cells, COLUMNS, strict=True))
        self.out.write(line.rstrip() + "\n")
        if not sample.ok and sample.error_message:
            self.errors.append((sample.target, sample.error_message))
        self.out.flush()

    def finish(self) -> None:
        if self.errors:
            self.out.write("\nerrors:\n")
            for target, message in self.errors:
                self.out.write(f"  {target}: {message}\n")
        self.out.write("(~ = token count estimated: the stream reported no usage)\n")


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"
