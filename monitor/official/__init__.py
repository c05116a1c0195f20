"""Providers' official status pages against our alerts, in one place.

poll.py    the leader job: each `providers.<p>.status_page:` (a Statuspage v2 summary) fetched,
           parsed and stored (monitor.storage.queries.official keeps the rows)
match.py   pure: which official incident one of our alerts matches, and how many minutes apart
           (read by the alert store when it builds a notification, and by the dashboard)
"""
