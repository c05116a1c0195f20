"""The MCP server: firsttoken's read-only tools on the official `mcp` SDK (DESIGN §14).

Each tool is a thin adapter over `tools.py`: typed arguments in (the SDK derives the
input schema from the signature), a pydantic model out (its output schema). Database
work runs on a worker thread, so one slow query never stalls the transport's loop.
"""

from __future__ import annotations

import functools
import logging
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from sqlalchemy.exc import SQLAlchemyError

from monitor import __version__
from monitor.mcp_server import models, tools

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "firsttoken measures LLM API routes (provider x region serving a model) with synthetic probes. "
    "Call best_routes before choosing a provider or region for a model: rank 1 is the fastest route "
    "whose availability is at or above the floor right now. provider_status says whether a provider is "
    "healthy; recent_alerts lists what regressed; slo_status says how much of each SLO's error "
    "budget is left."
)
READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)


async def _call(fn, *args, **kwargs):
    try:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
    except tools.ToolInputError as exc:
        raise ToolError(str(exc)) from None
    except SQLAlchemyError as exc:  # say what failed, never the URL or the query
        log.warning("MCP tool %s: database unavailable: %s", fn.__name__, type(exc).__name__)
        raise ToolError(f"database unavailable: {type(exc).__name__}") from None


def build_server(reader: tools.Reader) -> MCPServer:
    server = MCPServer(name="firsttoken", version=__version__, instructions=INSTRUCTIONS)

    @server.tool(annotations=READ_ONLY)
    async def best_routes(
        model: Annotated[str | None, Field(description="canonical model name (or a provider's model id)")] = None,
        prompt: Annotated[str | None, Field(description="only this prompt")] = None,
        agent: Annotated[str | None, Field(description="only what this vantage point (agent) measured")] = None,
        window: Annotated[str, Field(description="how far back to measure, e.g. 1m, 30m, 6h")] = "30m",
        min_availability: Annotated[str, Field(description="availability floor, e.g. 99% or 0.99")] = "99%",
        by: Annotated[Literal["ttft", "tps", "cost"], Field(description="order within a tier")] = "ttft",
    ) -> models.BestRoutes:
        """Rank the live routes of each canonical model and prompt: the rows of `firsttoken routes --json`,
        in the same order. Routes at or above the availability floor come first, fastest p50 TTFT first."""
        return await _call(
            tools.best_routes, reader, model, prompt, agent, window, min_availability=min_availability, by=by
        )

    @server.tool(annotations=READ_ONLY)
    async def provider_status(
        provider: Annotated[str, Field(description="a provider name from the firsttoken config")],
    ) -> models.ProviderStatus:
        """One provider's status over the last 15 minutes, as /status.json shows it: the provider's and
        each model's status, its p50 TTFT, and its firing incidents."""
        return await _call(tools.provider_status, reader, provider)

    @server.tool(annotations=READ_ONLY)
    async def recent_alerts(
        since: Annotated[str, Field(description="alerts alive at any time in this span, e.g. 1h, 24h, 7d")] = "24h",
        severity: Annotated[Literal["page", "ticket", "info"] | None, Field(description="only this severity")] = None,
        state: Annotated[Literal["pending", "firing", "resolved"] | None, Field(description="only this state")] = None,
    ) -> models.RecentAlerts:
        """Alerts firing, pending or resolved since `since` ago, newest first."""
        return await _call(tools.recent_alerts, reader, since, severity, state)

    @server.tool(annotations=READ_ONLY)
    async def slo_status(
        name: Annotated[str | None, Field(description="only this SLO (a name from the config's slos:)")] = None,
    ) -> models.SloStatus:
        """Each SLO scope's attainment over the period, error budget left, burn rate over each alert window
        and when the budget runs out: the rows of `firsttoken slo --json`."""
        return await _call(tools.slo_status, reader, name)

    return server
