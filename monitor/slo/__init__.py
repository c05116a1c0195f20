"""SLOs and error budgets (DESIGN §12), the pure core: no clock, no database.

windows   the workbook's four burn-rate window pairs, scaled to the period
good      is one probe good for an SLO
counts    count-based sliding windows over one series' good/bad probes
burn      one SLO scope's alert across its agents: firing, escalation, resolution
budget    attainment, budget remaining and exhaustion over the period
scopes    which scope (target, provider, model, all) a target's probes count towards
"""
