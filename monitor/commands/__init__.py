"""One module per `firsttoken` command, each exposing `run(args) -> int`."""

DEFAULT_CONFIG = "firsttoken.yaml"  # every command's --config default
