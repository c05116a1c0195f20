"""The alert jobs the leader runs (in its one list: tests/leader/test_jobs.py)."""

from __future__ import annotations

from monitor.alerts.engine import AlertEngine, alert_jobs
from monitor.alerts.outbox import OutboxDelivery


def test_alert_jobs_evaluate_every_30s_and_deliver_every_5s():
    jobs = alert_jobs()
    assert list(jobs) == ["alerts.evaluate", "alerts.deliver"]  # evaluation first: new pages go out the same tick
    (eval_s, evaluate), (deliver_s, deliver) = jobs.values()
    assert (eval_s, deliver_s) == (30.0, 5.0)
    assert isinstance(evaluate.__self__, AlertEngine) and isinstance(deliver.__self__, OutboxDelivery)
