"""Which of a gateway's deployments to let through, given firsttoken's ranked routes. Pure.

A deployment is matched to routes from the gateway's own config alone: its `api_base` and
its model id (LiteLLM's `openai/<id>` without the provider prefix) against each route's
`base_url` and `provider_model`. Then, for one model group:

- nothing matched (firsttoken knows nothing of the group): the deployments as they were;
- matched deployments firsttoken sees below the availability floor are dropped;
- of the rest, the best-ranked are kept: the fastest, and any within `slack` of its p50
  TTFT, so near-equals still share the load. Reordering alone would change nothing: a
  router's simple-shuffle ignores the order it is handed;
- deployments firsttoken does not probe are left out while a known good one remains;
- whatever happens, never an empty list: when every known deployment is failing, the
  gateway's own choice stands (firsttoken never blocks traffic).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

DEFAULT_SLACK = 0.2  # a route within 20% of the best p50 TTFT is as good as the best
# Where LiteLLM sends a deployment that names no api_base: its provider's public endpoint
# (LiteLLM's defaults for these prefixes), so a config that relies on them still matches.
DEFAULT_API_BASES = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "groq": "https://api.groq.com/openai/v1",
    "together_ai": "https://api.together.xyz/v1",
    "fireworks_ai": "https://api.fireworks.ai/inference/v1",
    "mistral": "https://api.mistral.ai/v1",
    "deepseek": "https://api.deepseek.com",
    "openrouter": "https://openrouter.ai/api/v1",
    "gemini": "https://generativelanguage.googleapis.com",
}


@dataclass(frozen=True, slots=True)
class RouteView:
    """What the choice needs of one route of GET /routes."""

    base_url: str
    provider_model: str
    prompt: str
    rank: int
    eligible: bool
    ttft_p50_ms: float | None


def normalize_base(url: str | None) -> str | None:
    """scheme://host[:port]/path, lowercased host, no default port, credentials, query, trailing slash or
    final `/v1` (one host is configured with and without it: `https://api.deepseek.com[/v1]`)."""
    if not url:
        return None
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.hostname:
        return None
    port = parts.port
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, default) else f"{host}:{port}"
    path = parts.path.rstrip("/")
    path = path.removesuffix("/v1")
    return f"{parts.scheme.lower()}://{netloc}{path}"


def routes_from_json(body: Mapping[str, Any]) -> list[RouteView]:
    out = []
    for r in body.get("routes") or ():
        base = normalize_base(r.get("base_url"))
        if base is None or not r.get("provider_model"):
            continue  # a route firsttoken cannot name an endpoint for matches no deployment
        out.append(
            RouteView(
                base_url=base,
                provider_model=str(r["provider_model"]),
                prompt=str(r.get("prompt") or ""),
                rank=int(r.get("rank") or 0),
                eligible=bool(r.get("above_floor")),
                ttft_p50_ms=(r.get("ttft_ms") or {}).get("p50"),
            )
        )
    return out


def deployment_key(deployment: Mapping[str, Any]) -> tuple[str, str] | None:
    params = deployment.get("litellm_params") or {}
    model = str(params.get("model") or "")
    prefix, _, model_id = model.partition("/") if "/" in model else ("", "", model)
    base = normalize_base(params.get("api_base") or DEFAULT_API_BASES.get(prefix))
    if base is None or not model_id:
        return None
    return base, model_id


def choose(
    deployments: Sequence[dict],
    routes: Sequence[RouteView],
    *,
    prompt: str | None = None,
    slack: float = DEFAULT_SLACK,
) -> list[dict]:
    """The deployments to let through (a sub-list of `deployments`, in their order)."""
    index: dict[tuple[str, str], list[RouteView]] = {}
    for r in routes:
        if prompt is None or r.prompt == prompt:
            index.setdefault((r.base_url, r.provider_model), []).append(r)
    matched: dict[int, RouteView] = {}
    chosen_prompt = prompt or _commonest_prompt(deployments, index)
    for i, d in enumerate(deployments):
        key = deployment_key(d)
        for r in index.get(key, ()) if key else ():
            if r.prompt == chosen_prompt:
                matched[i] = r
    if not matched:
        return list(deployments)
    good = {i: r for i, r in matched.items() if r.eligible}
    if not good:
        return list(deployments)
    best = min(good.values(), key=lambda r: r.rank)
    keep = {i for i, r in good.items() if _near(r, best, slack)}
    return [d for i, d in enumerate(deployments) if i in keep]


def _near(route: RouteView, best: RouteView, slack: float) -> bool:
    if route is best or route.rank == best.rank:
        return True
    if route.ttft_p50_ms is None or best.ttft_p50_ms is None:
        return False
    return route.ttft_p50_ms <= best.ttft_p50_ms * (1 + slack)


def _commonest_prompt(deployments: Sequence[dict], index: Mapping[tuple[str, str], list[RouteView]]) -> str | None:
    """The prompt whose routes cover most of the group's deployments (ties: name order): the
    group's deployments are compared on one prompt, never a fast prompt against a slow one."""
    counts: dict[str, int] = {}
    for d in deployments:
        key = deployment_key(d)
        for r in index.get(key, ()) if key else ():
            counts[r.prompt] = counts.get(r.prompt, 0) + 1
    if not counts:
        return None
    return min(counts, key=lambda p: (-counts[p], p))
