"""Maintenance windows (DESIGN §16): planned work that mutes pages, marks probes and leaves SLO
minutes out. `windows` is pure (expansion of the config's one-off and RRULE windows into concrete
intervals, `Coverage`); `store` is the database edge (windows added at run time, providers'
scheduled ones); `alertmanager` prints them as Alertmanager `time_intervals`.

Probes are marked at read time, not when written: a probe is "in maintenance" when one of our windows
(config or database; a provider's does not count) covers its target at its `started_at`, computed
by whoever reads it (`firsttoken samples --json`'s `in_maintenance`, the SLO readers, the status
site) from the windows and the probe's labels. Not a column set by the agent, because:

- the agent knows only the config's windows; one added with `firsttoken maintenance add` lives in
  the leader's database, and an agent's batch may be written minutes later from its spool;
- a window ended early (`maintenance end`) or added for work already under way must change what its
  probes count as, and the SLO budgets read the same windows the same way: one truth, no backfill;
- `samples` is the large, partitioned table; its write path is on the agents' overhead budget.

The price: editing a config window's times re-marks the probes of its past occurrences too (to change
a recurring window from now on, end the old RRULE with an `UNTIL` and add a new window). Windows are few and short,
so reading them beside the samples costs one small query.
"""
