"""How one simulated model behaves: timing, size, faults; and `sim:` model names.

A `ModelBehaviour` is a plain value. Where it comes from (the built-in
catalogue, a scenario file, the control API, a `sim:` name) is the business
of `catalogue.py`; how a request is timed from it is `plan.py`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# Faults answered with an HTTP error status before any body.
HTTP_FAULTS = ("rate_limited", "server_error", "overloaded", "auth", "client_error", "echo_key")
# Faults that shape or break a 200 response.
STREAM_FAULTS = (
    "hang",
    "slow_headers",
    "reset",
    "truncate",
    "malformed",
    "stream_error",
    "empty",
    "huge_line",
    "invalid_utf8",
    "html",
    "html_502",
    "trickle",
    "throttle_stream",
)
FAULTS = HTTP_FAULTS + STREAM_FAULTS


class BehaviourError(ValueError):
    """A behaviour field or `sim:` parameter is unknown or out of range."""


@dataclass(frozen=True, slots=True)
class ModelBehaviour:
    """One model's behaviour. With `jitter=0` and no probabilities, exact.

    `ttft_ms` is the configured median from request arrival to the first
    token; prompt length adds `prefill_ms_per_1k_tokens` per 1,000 prompt
    tokens. `itl_ms` is the gap per token, so a chunk of `tokens_per_chunk`
    tokens follows the previous one after `itl_ms * tokens_per_chunk`.
    """

    ttft_ms: float = 200.0
    itl_ms: float = 10.0
    output_tokens: int = 64  # answer tokens; reasoning_tokens come on top of these
    prefill_ms_per_1k_tokens: float = 0.0
    jitter: float = 0.0  # lognormal sigma: 0.1 ≈ ±10 % around the configured median
    spike_probability: float = 0.0
    spike_factor: float = 5.0  # TTFT multiplier of a spike
    reasoning_tokens: int = 0  # emitted as reasoning before the answer; counted in output usage
    tokens_per_chunk: int = 1
    usage: bool = True  # report token usage in the stream
    fault: str | None = None
    fault_probability: float = 1.0
    fault_delay_ms: float | None = None  # slow_headers wait (default 5 s), trickle byte gap (default 1 s)
    fault_after_tokens: int | None = None  # mid-stream faults strike after this many tokens (default: half)
    error_rate: float = 0.0  # probability of a random 429/500/503 instead of an answer
    # TTFT multiplier per region hint, as sorted (region, factor) pairs so the
    # value stays hashable; a mapping is accepted and converted.
    region_factors: tuple[tuple[str, float], ...] = ()
    # Route truth (DESIGN §10): a simulated gateway names its upstream the way a real
    # one does. `gateway: openrouter` puts `served_by` in every chunk's top-level
    # `provider` (openai-chat only); `litellm` sends the x-litellm-* headers with
    # `fallbacks` as x-litellm-attempted-fallbacks; `azure` sends `served_by` as x-ms-region.
    gateway: str | None = None
    served_by: str | None = None
    fallbacks: int = 0
    fingerprint: str | None = None  # openai-chat `system_fingerprint` (default fp_simulator)
    ratelimit_remaining_requests: int | None = None  # sent as the protocol's rate-limit headers
    ratelimit_remaining_tokens: int | None = None
    # Prompt caching (DESIGN §13, monitor.simulator.prefix_cache): a prefix seen before within
    # 5 minutes is not prefilled again and is reported in the protocol's usage shape. False
    # plays a cache that stopped hitting. Prefixes shorter than cache_min_tokens are not cached.
    prompt_cache: bool = True
    cache_min_tokens: int = 1024

    def __post_init__(self) -> None:
        if isinstance(self.region_factors, Mapping):
            pairs = tuple(sorted((str(k), float(v)) for k, v in self.region_factors.items()))
            object.__setattr__(self, "region_factors", pairs)
        _validate(self)

    def region_factor(self, region: str | None) -> float:
        """TTFT multiplier for a region (1.0 when the region is not listed)."""
        for name, factor in self.region_factors:
            if name == region:
                return factor
        return 1.0

    def with_fields(self, fields: Mapping[str, Any]) -> ModelBehaviour:
        """A copy with `fields` (names as in the dataclass) converted and applied."""
        return dataclasses.replace(self, **coerce_fields(fields))

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["region_factors"] = dict(self.region_factors)
        return out


FIELD_NAMES = tuple(f.name for f in dataclasses.fields(ModelBehaviour))
_FLOAT_FIELDS = {
    "ttft_ms",
    "itl_ms",
    "prefill_ms_per_1k_tokens",
    "jitter",
    "spike_probability",
    "spike_factor",
    "fault_probability",
    "fault_delay_ms",
    "error_rate",
}
_INT_FIELDS = {
    "output_tokens",
    "reasoning_tokens",
    "tokens_per_chunk",
    "fault_after_tokens",
    "fallbacks",
    "ratelimit_remaining_requests",
    "ratelimit_remaining_tokens",
    "cache_min_tokens",
}
_BOOL_FIELDS = {"usage", "prompt_cache"}
_STR_FIELDS = {"fault", "gateway", "served_by", "fingerprint"}
_OPTIONAL_FIELDS = {
    "fault",
    "fault_delay_ms",
    "fault_after_tokens",
    "gateway",
    "served_by",
    "fingerprint",
    "ratelimit_remaining_requests",
    "ratelimit_remaining_tokens",
}
GATEWAYS = ("openrouter", "litellm", "azure")
_PROBABILITY_FIELDS = ("spike_probability", "fault_probability", "error_rate")

# Short names for `sim:` model names; the full field names work too.
SIM_ALIASES = {
    "ttft": "ttft_ms",
    "itl": "itl_ms",
    "tokens": "output_tokens",
    "prefill": "prefill_ms_per_1k_tokens",
    "jitter": "jitter",
    "spike": "spike_probability",
    "spike_factor": "spike_factor",
    "reasoning": "reasoning_tokens",
    "chunk": "tokens_per_chunk",
    "usage": "usage",
    "fault": "fault",
    "fault_p": "fault_probability",
    "delay": "fault_delay_ms",
    "after": "fault_after_tokens",
    "errors": "error_rate",
    "gateway": "gateway",
    "served_by": "served_by",
    "fallbacks": "fallbacks",
    "fp": "fingerprint",
    "cache": "prompt_cache",
    "cache_min": "cache_min_tokens",
}


def coerce_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Convert JSON/YAML/`sim:` values to field types; unknown names raise."""
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if name not in FIELD_NAMES:
            raise BehaviourError(f"{name}: unknown behaviour field")
        out[name] = _coerce(name, value)
    return out


def _coerce(name: str, value: Any) -> Any:
    if value is None or (isinstance(value, str) and value.lower() in ("none", "null", "")):
        if name in _OPTIONAL_FIELDS:
            return None
        raise BehaviourError(f"{name}: a value is required")
    try:
        if name in _BOOL_FIELDS:
            return _as_bool(value)
        if name == "region_factors":
            if not isinstance(value, Mapping):
                raise TypeError
            return tuple(sorted((str(k), float(v)) for k, v in value.items()))
        if name in _STR_FIELDS:
            return str(value)
        if isinstance(value, bool):
            raise TypeError
        if name in _INT_FIELDS:
            number = float(value)
            if number != int(number):
                raise ValueError
            return int(number)
        if name in _FLOAT_FIELDS:
            return float(value)
    except (TypeError, ValueError):
        raise BehaviourError(f"{name}: invalid value {value!r}") from None
    raise BehaviourError(f"{name}: unknown behaviour field")


def _as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError


def _validate(b: ModelBehaviour) -> None:
    for name in ("ttft_ms", "itl_ms", "prefill_ms_per_1k_tokens", "jitter"):
        value = getattr(b, name)
        if not math.isfinite(value) or value < 0:
            raise BehaviourError(f"{name}: must be a finite number >= 0, got {value!r}")
    for name in _PROBABILITY_FIELDS:
        value = getattr(b, name)
        if not 0.0 <= value <= 1.0:
            raise BehaviourError(f"{name}: must be between 0 and 1, got {value!r}")
    if b.spike_factor < 0 or not math.isfinite(b.spike_factor):
        raise BehaviourError(f"spike_factor: must be >= 0, got {b.spike_factor!r}")
    if b.output_tokens < 0 or b.reasoning_tokens < 0:
        raise BehaviourError("output_tokens and reasoning_tokens must be >= 0")
    if b.tokens_per_chunk < 1:
        raise BehaviourError(f"tokens_per_chunk: must be >= 1, got {b.tokens_per_chunk!r}")
    if b.fault is not None and b.fault not in FAULTS:
        raise BehaviourError(f"fault: unknown fault {b.fault!r} (known: {', '.join(FAULTS)})")
    if b.fault_delay_ms is not None and b.fault_delay_ms < 0:
        raise BehaviourError("fault_delay_ms: must be >= 0")
    if b.fault_after_tokens is not None and b.fault_after_tokens < 0:
        raise BehaviourError("fault_after_tokens: must be >= 0")
    if b.gateway is not None and b.gateway not in GATEWAYS:
        raise BehaviourError(f"gateway: unknown gateway {b.gateway!r} (known: {', '.join(GATEWAYS)})")
    for name in ("fallbacks", "ratelimit_remaining_requests", "ratelimit_remaining_tokens", "cache_min_tokens"):
        value = getattr(b, name)
        if value is not None and value < 0:
            raise BehaviourError(f"{name}: must be >= 0")
    for region, factor in b.region_factors:
        if not (math.isfinite(factor) and factor >= 0):
            raise BehaviourError(f"region_factors.{region}: must be >= 0")


SIM_PREFIX = "sim:"


def is_sim_name(model: str) -> bool:
    return model.startswith(SIM_PREFIX)


@lru_cache(maxsize=4096)
def parse_sim_name(model: str) -> ModelBehaviour:
    """`sim:ttft=150:itl=5:tokens=40` → a behaviour over the defaults (deterministic: no jitter).

    Cached: probes repeat the same few names thousands of times.
    """
    if not is_sim_name(model):
        raise BehaviourError(f"not a sim: model name: {model!r}")
    fields: dict[str, Any] = {}
    for part in model[len(SIM_PREFIX) :].split(":"):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        name = SIM_ALIASES.get(key, key if key in FIELD_NAMES and key != "region_factors" else None)
        if name is None:
            raise BehaviourError(f"unknown sim: parameter {key!r} (known: {', '.join(SIM_ALIASES)})")
        if not sep:
            raise BehaviourError(f"sim: parameter {key!r} needs a value ({key}=…)")
        fields[name] = value.strip()
    return ModelBehaviour().with_fields(fields)
