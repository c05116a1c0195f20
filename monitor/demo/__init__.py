"""`firsttoken demo`: simulated providers with scheduled incidents, a backfilled history, the live service.

cast.py          who plays: providers, models, regions, prompts (pure data)
incidents.py     what happens when: the incident schedule as a BehaviourSource (pure)
demo_config.py   the config file the demo writes (pure text)
virtual_time.py  a settable clock and an httpx transport that never waits
vantage.py       the second vantage point, demo-far: its targets and its path over time (pure)
backfill.py      a day of history through the production probe, writer and alert engine
far_agent.py     demo-far live: a second `firsttoken run` behind a relay that plays its path
wiring.py        the seams to the alert engine and the dashboard
runner.py        the whole command, start to Ctrl-C
"""
