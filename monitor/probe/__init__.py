"""One probe: runner, measurement, stream session, replay, tokens; transport/ for HTTP."""
