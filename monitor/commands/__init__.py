"""One module per `firsttoken` command, each exposing `run(args) -> int`."""
