"""The HTTP edge of a probe: one-connection lanes, the asyncio network backend, the connection trace."""
