"""Alerting (DESIGN §5): detection (`detect`), the alert engine, notifiers.

Detection is pure: `detect.SeriesDetector` turns one series' observations into
evaluations; see `detect.py` for the API and `benchmarks/detection/` for
how well it does.
"""
