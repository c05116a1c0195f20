"""Scheduled incidents: the demo's behaviour as a function of wall time.

Times are relative to the demo epoch, where the backfilled history ends (the
moment `firsttoken demo` started, floored to the history's probe grid), and
to the start of the live period. Incidents in the history are placed at
fractions of its length, so a short backfill (the tests use 3 h) still holds
each of them, fired and resolved, while a day spreads them out. Three more
happen live, from a few minutes after start, so a new user watches one alert
fire and resolve. The daily cycle peaks at a fixed time before the epoch
too: one seed gives one history, whatever the time of day it is written.

`DemoSource` is a `monitor.simulator.BehaviourSource`: the live simulator and
the backfill's virtual transport both ask it, so history and live data come
from one model of the world. Pure: time is an argument.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from monitor.demo.cast import MODELS, PROVIDER_OF_MODEL
from monitor.simulator.behaviour import ModelBehaviour
from monitor.simulator.catalogue import Catalogue
from monitor.units import HOUR_S, MINUTE_S

DIURNAL_AMPLITUDE = 0.1  # ±10 % over the day
UTC_PEAK_S = 18 * HOUR_S  # a source told no other peak is busiest in the US afternoon (18:00 UTC)
PEAK_BEFORE_EPOCH_S = 6 * HOUR_S  # the demo's day: busiest six hours before its history ends


@dataclass(frozen=True, slots=True)
class Incident:
    """One provider's bad spell. Empty `models`/`regions` mean all of them."""

    name: str
    summary: str
    provider: str
    start_s: float  # epoch seconds
    end_s: float
    models: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    ttft_factor: float = 1.0  # prefill included
    itl_factor: float = 1.0
    ramp_s: float = 0.0  # the factors grow linearly from 1 over this long: a slow regression
    error_rate: float = 0.0  # random 429/500/503 answers
    rate_limited: float = 0.0  # share of requests answered 429
    # A gateway's route during the incident: the upstream it falls back to, the build it serves.
    served_by: str | None = None
    fingerprint: str | None = None
    cache_broken: bool = False  # the provider's prompt cache stops hitting (DESIGN §13)

    def applies(self, provider: str | None, model: str, region: str | None, now_s: float) -> bool:
        return (
            self.start_s <= now_s < self.end_s
            and provider == self.provider
            and (not self.models or model in self.models)
            and (not self.regions or region in self.regions)
        )

    def strength(self, now_s: float) -> float:
        """0 → 1 over the ramp, 1 after it (and for incidents without one)."""
        if self.ramp_s <= 0:
            return 1.0
        return min(1.0, max(0.0, (now_s - self.start_s) / self.ramp_s))


def place(epoch_s: float, history_s: float, at_frac: float, duration_s: float, max_frac: float) -> tuple[float, float]:
    """(start, end) of an incident `at_frac` into the history, at most `max_frac` of it long."""
    start = epoch_s - history_s + at_frac * history_s
    return start, start + min(duration_s, max_frac * history_s)


def schedule(epoch_s: float, history_s: float, live_s: float | None = None) -> tuple[Incident, ...]:
    """The demo's incidents: five in the history ending at `epoch_s`, three live from `live_s` (the epoch)."""
    live_s = epoch_s if live_s is None else live_s
    slow_start, slow_end = place(epoch_s, history_s, 0.25, 6 * HOUR_S, 0.2)
    rebuilt = place(epoch_s, history_s, 0.55, 2 * HOUR_S, 0.15)
    degraded = place(epoch_s, history_s, 0.70, 90 * MINUTE_S, 0.15)
    limited = place(epoch_s, history_s, 0.45, 45 * MINUTE_S, 0.2)
    cache_lost = place(epoch_s, history_s, 0.10, HOUR_S, 0.15)
    return (
        Incident(
            "sim-openai prompt cache stops hitting",
            "sim-openai's prompt cache stops hitting for an hour: every warm cache probe is as slow as a cold one",
            "sim-openai",
            *cache_lost,
            cache_broken=True,
        ),
        Incident(
            "gpt-4o slow regression",
            "a deploy makes sim-openai gpt-4o's first token creep up to 2.2x, then it is rolled back",
            "sim-openai",
            slow_start,
            slow_end,
            models=("gpt-4o",),
            ttft_factor=2.2,
            ramp_s=(slow_end - slow_start) * 0.5,
        ),
        Incident(
            "gemini-2.5-flash rate limited",
            "sim-gemini answers 65% of gemini-2.5-flash requests with 429",
            "sim-gemini",
            *limited,
            models=("gemini-2.5-flash",),
            rate_limited=0.65,
        ),
        Incident(
            "sim-anthropic eu-west degraded",
            "every sim-anthropic model in eu-west: first token 3.5x slower, decode 1.6x slower, 8% errors",
            "sim-anthropic",
            *degraded,
            regions=("eu-west",),
            ttft_factor=3.5,
            itl_factor=1.6,
            error_rate=0.08,
        ),
        Incident(
            "sim-router rebuilt upstream",
            "sim-router's upstream serves llama-3.1-70b from a new build (fingerprint fp_groq_b2) for a while",
            "sim-router",
            *rebuilt,
            fingerprint="fp_groq_b2",
        ),
        Incident(
            "live: sim-router falls back in us-east",
            "the gateway's pinned upstream (Groq) is rate limited in us-east: it silently falls back to Together, "
            "2.5x slower to first token; eu-west becomes the better route",
            "sim-router",
            live_s + 4 * MINUTE_S,
            live_s + 20 * MINUTE_S,
            regions=("us-east",),
            ttft_factor=2.5,
            served_by="Together",
            fingerprint="fp_together_7",
        ),
        Incident(
            "live: sim-gemini europe-west4 degraded",
            "every sim-gemini model in europe-west4: first token 4x slower, 10% errors",
            "sim-gemini",
            live_s + 3 * MINUTE_S,
            live_s + 15 * MINUTE_S,
            regions=("europe-west4",),
            ttft_factor=4.0,
            error_rate=0.1,
        ),
        Incident(
            "live: gpt-4o-mini rate limited",
            "sim-openai answers 70% of gpt-4o-mini requests in us-east with 429",
            "sim-openai",
            live_s + 25 * MINUTE_S,
            live_s + 40 * MINUTE_S,
            models=("gpt-4o-mini",),
            regions=("us-east",),
            rate_limited=0.7,
        ),
    )


def demo_peak_s(epoch_s: float) -> float:
    """When the demo's daily cycle peaks: placed from its epoch, like its incidents."""
    return epoch_s - PEAK_BEFORE_EPOCH_S


def diurnal_factor(now_s: float, amplitude: float = DIURNAL_AMPLITUDE, peak_s: float = UTC_PEAK_S) -> float:
    """1 ± `amplitude` over a day, highest at `peak_s` and every 24 h from it."""
    hours = ((now_s - peak_s) / HOUR_S) % 24.0
    return 1.0 + amplitude * math.cos(2 * math.pi * hours / 24.0)


class DemoSource:
    """Cast behaviour × the daily cycle × whatever incidents are under way."""

    def __init__(
        self,
        incidents: Sequence[Incident] = (),
        models: Mapping[str, ModelBehaviour] = MODELS,
        provider_of: Mapping[str, str] = PROVIDER_OF_MODEL,
        diurnal_amplitude: float = DIURNAL_AMPLITUDE,
        peak_s: float = UTC_PEAK_S,
    ) -> None:
        self.incidents = tuple(incidents)
        self.catalogue = Catalogue(models)  # also answers `sim:` names, for trials
        self.provider_of = dict(provider_of)
        self.diurnal_amplitude = diurnal_amplitude
        self.peak_s = peak_s

    def behaviour_for(self, model: str, region_hint: str | None, now_s: float) -> ModelBehaviour:
        base = self.catalogue.behaviour_for(model, region_hint, now_s)
        provider = self.provider_of.get(model)
        if provider is None:
            return base
        ttft = diurnal_factor(now_s, self.diurnal_amplitude, self.peak_s)
        itl, ok_share, limited_share = 1.0, 1.0, 0.0
        route: dict = {}
        for incident in self.incidents:
            if not incident.applies(provider, model, region_hint, now_s):
                continue
            s = incident.strength(now_s)
            if incident.served_by:
                route["served_by"] = incident.served_by
            if incident.fingerprint:
                route["fingerprint"] = incident.fingerprint
            if incident.cache_broken:
                route["prompt_cache"] = False
            ttft *= 1 + (incident.ttft_factor - 1) * s
            itl *= 1 + (incident.itl_factor - 1) * s
            ok_share *= 1 - incident.error_rate * s
            limited_share = max(limited_share, incident.rate_limited * s)
        return dataclasses.replace(
            base,
            ttft_ms=base.ttft_ms * ttft,
            prefill_ms_per_1k_tokens=base.prefill_ms_per_1k_tokens * ttft,
            itl_ms=base.itl_ms * itl,
            error_rate=1 - ok_share,
            fault="rate_limited" if limited_share > 0 else base.fault,
            fault_probability=limited_share if limited_share > 0 else base.fault_probability,
            **route,
        )
