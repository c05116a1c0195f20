"""Who plays in the demo: three simulated providers, two models and two regions each.

Each provider speaks its real wire protocol (OpenAI-compatible chat,
Anthropic Messages, Gemini), so the demo exercises the same parsers as
production. A small fast model sits next to a slower flagship, as in the
seed articles' comparison; the numbers are shaped after public figures, not
measurements. Pure data: no I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass

from monitor.simulator.behaviour import ModelBehaviour


@dataclass(frozen=True, slots=True)
class SimProvider:
    name: str
    protocol: str
    regions: tuple[str, ...]
    models: tuple[str, ...]  # small first, then flagship


PROVIDERS: tuple[SimProvider, ...] = (
    SimProvider("sim-openai", "openai-chat", ("us-east", "eu-west"), ("gpt-4o-mini", "gpt-4o")),
    SimProvider("sim-anthropic", "anthropic", ("us-east", "eu-west"), ("claude-haiku-4-5", "claude-sonnet-4-5")),
    SimProvider("sim-gemini", "gemini", ("us-central1", "europe-west4"), ("gemini-2.5-flash", "gemini-2.5-pro")),
    # A gateway (OpenRouter-style): every chunk names the upstream that served it. The demo
    # pins Groq first; during the live incident the gateway falls back to a slower upstream.
    SimProvider("sim-router", "openai-chat", ("us-east", "eu-west"), ("llama-3.1-70b",)),
)
GATEWAY_PIN = "groq"  # the route `sim-router` requests pin first (params.provider.order[0])

# Prefill grows TTFT with prompt length (per 1k prompt tokens); the flagships
# pay several times more for it, as the seed articles measured. Gemini sends
# many tokens per event; the others' chunks are coarser than the real ones
# (a token or two), which keeps a day of backfill cheap and changes no TTFT.
MODELS: dict[str, ModelBehaviour] = {
    "gpt-4o-mini": ModelBehaviour(
        ttft_ms=320, itl_ms=9, output_tokens=40, prefill_ms_per_1k_tokens=30, jitter=0.18,
        spike_probability=0.01, spike_factor=4, tokens_per_chunk=3,
        region_factors={"eu-west": 1.25},
    ),
    "gpt-4o": ModelBehaviour(
        ttft_ms=520, itl_ms=16, output_tokens=48, prefill_ms_per_1k_tokens=90, jitter=0.2,
        spike_probability=0.01, spike_factor=4, tokens_per_chunk=3,
        region_factors={"eu-west": 1.2},
    ),
    "claude-haiku-4-5": ModelBehaviour(
        ttft_ms=430, itl_ms=11, output_tokens=40, prefill_ms_per_1k_tokens=45, jitter=0.16,
        spike_probability=0.01, spike_factor=5, tokens_per_chunk=4,
        region_factors={"eu-west": 1.15},
    ),
    "claude-sonnet-4-5": ModelBehaviour(
        ttft_ms=850, itl_ms=19, output_tokens=48, reasoning_tokens=24, prefill_ms_per_1k_tokens=140,
        jitter=0.2, spike_probability=0.01, spike_factor=4, tokens_per_chunk=4,
        region_factors={"eu-west": 1.15},
    ),
    "gemini-2.5-flash": ModelBehaviour(
        ttft_ms=280, itl_ms=4, output_tokens=48, prefill_ms_per_1k_tokens=25, jitter=0.15,
        spike_probability=0.01, spike_factor=5, tokens_per_chunk=8,
        region_factors={"europe-west4": 1.2},
    ),
    "gemini-2.5-pro": ModelBehaviour(
        ttft_ms=1200, itl_ms=8, output_tokens=64, reasoning_tokens=64, prefill_ms_per_1k_tokens=110,
        jitter=0.22, spike_probability=0.01, spike_factor=3, tokens_per_chunk=16,
        region_factors={"europe-west4": 1.2},
    ),
    "llama-3.1-70b": ModelBehaviour(
        ttft_ms=240, itl_ms=4, output_tokens=40, prefill_ms_per_1k_tokens=20, jitter=0.15,
        spike_probability=0.01, spike_factor=4, tokens_per_chunk=4,
        region_factors={"eu-west": 1.35},
        gateway="openrouter", served_by="Groq", fingerprint="fp_groq_b1",
    ),
}  # fmt: skip

PROVIDER_OF_MODEL: dict[str, str] = {m: p.name for p in PROVIDERS for m in p.models}

SHORT_PROMPT = "Explain time to first token in one sentence."
LONG_PROMPT_TOKENS = 4000


def long_prompt_text(tokens: int = LONG_PROMPT_TOKENS) -> str:
    """A retrieval-style prompt of about `tokens` tokens: numbered passages, then the question.

    About four characters a token, as the simulator (and English) counts them.
    """
    passage = (
        "Latency report, section {n}. The gateway measured the time to first token for every request in this "
        "window, grouped by provider, model and region. Queueing in front of the model dominated the tail; "
        "prompt length added a steady cost per thousand tokens; the network added a few milliseconds more. "
    )
    parts, chars, n = [], 0, 1
    while chars < tokens * 4:
        text = passage.format(n=n)
        parts.append(text)
        chars += len(text)
        n += 1
    question = "\n\nUsing only the passages above, summarise what drives the time to first token."
    return "".join(parts).strip() + question
