"""Incidents (DESIGN §16): drafted from the alert pipeline's confirmed pages, never a second evaluator.

drafting.py  pure: one round's alert changes -> incident opens, updates (detected, confirmed from N
             vantage points, the provider's own incident linked, resolved) and resolutions
store.py     the tables: drafted in the alert engine's write transaction; publish, update, resolve
views.py     incidents read back as values (the CLI, the dashboard, the status site and its feed)
feed.py      the public Atom feed of published incidents and their updates
"""
