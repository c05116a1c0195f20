"""A probe agent, `firsttoken run`: service, scheduler, probe workers, periodic jobs, reachability, metrics.

Who leads and what the leader runs: monitor.leader. What the listen address serves: monitor.http.
"""
