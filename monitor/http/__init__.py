"""The HTTP surface of `firsttoken run --listen`: one module per endpoint group, a router, a server.

server.py        the WSGI server on its own thread (StatusServer), and ListenAddress: what `run` serves
app.py           the router: path -> endpoint
metrics.py       /metrics: the agent's Prometheus text, gzipped on request
health.py        /healthz: the service's verdict
routes.py        /routes: the live ranking; answer_cache.py shares one ranking between pollers
public.py        /status.json, /badge/<provider>.svg, /incidents.atom; statuspage.py builds them (pure)
statussite/      /status, /status/<provider>: the HTML status site; `status export` writes it as files
planned.py       maintenance windows as the public status shows them
mcp.py           /mcp: the read-only MCP tools, built on the first request
conditional.py   ETag, If-None-Match and max-age for the JSON a poller reads
"""
