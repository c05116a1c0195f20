"""Maintenance windows (DESIGN §16): planned work that mutes pages, marks probes and leaves SLO
minutes out. `windows` is pure (expansion of the config's one-off and RRULE windows into concrete
intervals); `store` is the database edge (windows added at run time, providers' scheduled ones)."""
