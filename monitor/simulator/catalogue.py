"""Where behaviours come from: built-in models, scenario files, runtime upserts.

The server asks a `BehaviourSource` for every request, passing the region
hint and the wall-clock time, so a later scenario engine can make behaviour a
function of region and time (incidents, diurnal load) by wrapping or
replacing `Catalogue` without touching the server.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import yaml

from monitor.simulator.behaviour import BehaviourError, ModelBehaviour, is_sim_name, parse_sim_name

# Unknown model names get this: plausible, slightly noisy.
DEFAULT_BEHAVIOUR = ModelBehaviour(ttft_ms=200.0, itl_ms=10.0, output_tokens=64, jitter=0.05)

# Rough public figures, so a config naming real models gets realistic shapes.
BUILTIN_MODELS: dict[str, ModelBehaviour] = {
    "gpt-4o-mini": ModelBehaviour(ttft_ms=350, itl_ms=12, output_tokens=64, prefill_ms_per_1k_tokens=40, jitter=0.15),
    "gpt-4o": ModelBehaviour(ttft_ms=450, itl_ms=18, output_tokens=64, prefill_ms_per_1k_tokens=60, jitter=0.15),
    "o3-mini": ModelBehaviour(ttft_ms=600, itl_ms=8, output_tokens=96, reasoning_tokens=48, jitter=0.2),
    "claude-3-5-haiku-latest": ModelBehaviour(ttft_ms=500, itl_ms=15, output_tokens=64, jitter=0.15),
    "claude-sonnet-4-5": ModelBehaviour(ttft_ms=900, itl_ms=20, output_tokens=96, reasoning_tokens=40, jitter=0.2),
    "gemini-2.0-flash": ModelBehaviour(ttft_ms=300, itl_ms=5, output_tokens=64, tokens_per_chunk=8, jitter=0.15),
    "gemini-2.5-pro": ModelBehaviour(
        ttft_ms=1500, itl_ms=10, output_tokens=128, reasoning_tokens=64, tokens_per_chunk=16, jitter=0.2
    ),
    "anthropic.claude-3-5-haiku-20241022-v1:0": ModelBehaviour(ttft_ms=550, itl_ms=15, output_tokens=64, jitter=0.15),
    "us.amazon.nova-micro-v1:0": ModelBehaviour(
        ttft_ms=250, itl_ms=6, output_tokens=64, tokens_per_chunk=3, jitter=0.1
    ),
    "meta-llama/llama-3.1-70b-instruct": ModelBehaviour(ttft_ms=400, itl_ms=14, output_tokens=64, jitter=0.2),
    "llama3.2": ModelBehaviour(ttft_ms=80, itl_ms=25, output_tokens=64, prefill_ms_per_1k_tokens=300, jitter=0.05),
}


class BehaviourSource(Protocol):
    """Anything that can say how `model` behaves for a request right now."""

    def behaviour_for(self, model: str, region_hint: str | None, now_s: float) -> ModelBehaviour:
        """`now_s` is wall-clock epoch seconds; raise BehaviourError for a bad `sim:` name."""
        ...


class Catalogue:
    """Named behaviours: built-ins, then the scenario file, then runtime upserts.

    Thread-safe for the in-thread test server, whose control calls may come
    from another thread. `sim:` names bypass the table.
    """

    def __init__(
        self, models: Mapping[str, ModelBehaviour] | None = None, default: ModelBehaviour = DEFAULT_BEHAVIOUR
    ) -> None:
        self._models: dict[str, ModelBehaviour] = dict(BUILTIN_MODELS if models is None else models)
        self.default = default
        self._lock = threading.Lock()

    def behaviour_for(self, model: str, region_hint: str | None = None, now_s: float = 0.0) -> ModelBehaviour:
        if is_sim_name(model):
            return parse_sim_name(model)
        return self._models.get(model, self.default)

    def get(self, name: str) -> ModelBehaviour | None:
        return self._models.get(name)

    def upsert(self, name: str, fields: Mapping[str, Any]) -> ModelBehaviour:
        """Merge `fields` over the model's current behaviour (or the default)."""
        if is_sim_name(name):
            raise BehaviourError("sim: names describe themselves and cannot be stored")
        with self._lock:
            behaviour = self._models.get(name, self.default).with_fields(fields)
            self._models[name] = behaviour
        return behaviour

    def set(self, name: str, behaviour: ModelBehaviour) -> None:
        with self._lock:
            self._models[name] = behaviour

    def remove(self, name: str) -> bool:
        with self._lock:
            return self._models.pop(name, None) is not None

    def snapshot(self) -> dict[str, ModelBehaviour]:
        with self._lock:
            return dict(self._models)


def load_scenario(path: str | Path, catalogue: Catalogue | None = None) -> Catalogue:
    """Apply a scenario file: `models: {name: {field: value}}` and optional `default:`.

    Entries merge over the built-in (or default) behaviour of the same name.
    Every problem is reported at once, one line each, as `models.NAME.field: …`.
    """
    catalogue = catalogue if catalogue is not None else Catalogue()
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BehaviourError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise BehaviourError(f"{path}: expected a mapping with `models:`")
    errors: list[str] = []
    unknown = set(data) - {"models", "default"}
    errors += [f"{key}: unknown scenario key" for key in sorted(unknown)]
    default = data.get("default")
    if default is not None:
        if not isinstance(default, Mapping):
            errors.append("default: expected a mapping of behaviour fields")
        else:
            try:
                catalogue.default = catalogue.default.with_fields(default)
            except BehaviourError as exc:
                errors.append(f"default.{exc}")
    models = data.get("models") or {}
    if not isinstance(models, Mapping):
        errors.append("models: expected a mapping of model name to behaviour")
        models = {}
    for name, fields in models.items():
        if not isinstance(fields or {}, Mapping):
            errors.append(f"models.{name}: expected a mapping of behaviour fields")
            continue
        try:
            catalogue.upsert(str(name), fields or {})
        except BehaviourError as exc:
            errors.append(f"models.{name}.{exc}")
    if errors:
        raise BehaviourError("\n".join(f"{path}: {line}" for line in errors))
    return catalogue
