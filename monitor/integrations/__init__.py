"""Gateways that route on firsttoken's live ranking (DESIGN §14): `litellm` is a LiteLLM proxy callback."""
