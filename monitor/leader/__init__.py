"""The once-only work across agents: who leads, and what the leader runs.

election.py        the lease row and its fencing token (LeaderElection, the fenced engine)
identity.py        who holds the lease, and whether that process is gone
lease_postgres.py  the lease's statements on PostgreSQL (the database's clock, a row lock)
lease_sqlite.py    the same calls on SQLite (the host's clock)
jobs.py            the leader's jobs, in one list: rollups, retention, alerting, status pages
"""
