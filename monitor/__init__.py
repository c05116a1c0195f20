"""firsttoken: a continuous synthetic monitor for LLM APIs."""

__version__ = "0.1.0"
