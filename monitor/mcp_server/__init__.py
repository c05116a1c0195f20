"""firsttoken's MCP server (DESIGN §14): read-only tools for desktop and coding agents.

`firsttoken mcp` serves it over stdio; `firsttoken run` mounts it, over streamable HTTP,
at /mcp on its listen address.
"""
