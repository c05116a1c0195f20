"""Incidents in the database (SQLite and PostgreSQL): drafted by the alert engine's write step,
published at once or held (`status_site.publish`), updated and resolved by people."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import select

from monitor.alerts.engine import AlertEngine, EngineOptions
from monitor.alerts.grouping import GroupPolicy
from monitor.alerts.records import RESOLVED, Change
from monitor.incidents.store import IncidentNotFound, post_update, publish, resolve
from monitor.incidents.views import get_incident, list_incidents, public_incidents
from monitor.storage.models import Alert
from monitor.storage.queries import insert_samples
from monitor.storage.queries.official import OfficialIncident, store_incidents
from tests.alerts.conftest import make_config
from tests.alerts.helpers import T0, config_spec, series
from tests.incidents.rounds import write_round
from tests.incidents.test_drafting import T0 as FIRED
from tests.incidents.test_drafting import firing

M0 = "p/m0@r1:short"
NO_HOLD = GroupPolicy(group_wait_s=0.0, group_wait_intervals=0.0)


def config_with(tmp_path, publish: str = "auto", components=("*",)):
    spec = config_spec(models=("m0", "m1")) | {"status_site": {"publish": publish, "components": list(components)}}
    return make_config(spec, tmp_path)


def draft_round(db, changes, config, at):
    return write_round(db, changes, config, at)


def test_the_engine_drafts_an_incident_in_its_write_and_resolves_it_with_its_alert(db, tmp_path):
    config = config_with(tmp_path)
    insert_samples(db, series(M0, T0, [100.0] * 6 + [500.0] * 8 + [100.0] * 8))
    engine = AlertEngine(EngineOptions(settle_s=0.0, group=NO_HOLD))
    for t in range(0, 310, 10):
        engine.evaluate(db, config, now=T0 + timedelta(seconds=t))
    with db.connect() as conn:
        (incident,) = list_incidents(conn)
        full = get_incident(conn, incident.id)
    assert (incident.provider, incident.status, incident.state) == ("p", "published", "resolved")
    assert incident.components == ("p/m0",) and incident.title.startswith("p m0: slow responses")
    assert [u.kind for u in full.updates] == ["detected", "resolved"] and all(u.published for u in full.updates)
    assert [(a.rule, a.scope_key, a.state) for a in full.alerts] == [("slow", M0, "resolved")]
    assert incident.started_at == full.alerts[0].fired_at and incident.resolved_at is not None


def test_publish_manual_keeps_drafts_until_published_then_publishes_each_draft_update(db, tmp_path):
    config = config_with(tmp_path, publish="manual")
    page = firing(scope=_scope("m0"), rule="slow")
    assert draft_round(db, [Change(page)], config, FIRED + timedelta(minutes=1)) == 1
    with db.connect() as conn:
        (incident,) = list_incidents(conn)
        assert incident.status == "draft" and incident.drafts == 1
        assert public_incidents(conn, FIRED - timedelta(days=1)) == []  # nothing public yet
    later = FIRED + timedelta(minutes=2)
    with db.begin() as conn:
        assert publish(conn, incident.id, later) == 1
        assert publish(conn, incident.id, later) == 0  # nothing left to publish
    # Held again: the automatic resolution of a published incident waits for the next `publish`.
    gone = replace(page, state=RESOLVED, resolved_at=FIRED + timedelta(minutes=5))
    draft_round(db, [Change(gone)], config, FIRED + timedelta(minutes=5))
    with db.connect() as conn:
        (shown,) = public_incidents(conn, FIRED - timedelta(days=1))
        assert shown.state == "investigating" and [u.kind for u in shown.updates] == ["detected"]
        assert get_incident(conn, incident.id).state == "resolved"  # where it really stands
    with db.begin() as conn:
        publish(conn, incident.id, FIRED + timedelta(minutes=6))
    with db.connect() as conn:
        (shown,) = public_incidents(conn, FIRED - timedelta(days=1))
    assert shown.state == "resolved" and [u.kind for u in shown.updates] == ["detected", "resolved"]


def test_publish_auto_publishes_at_once(db, tmp_path):
    config = config_with(tmp_path, publish="auto")
    draft_round(db, [Change(firing(scope=_scope("m0"), rule="slow"))], config, FIRED + timedelta(minutes=1))
    with db.connect() as conn:
        (shown,) = public_incidents(conn, FIRED - timedelta(days=1))
    assert shown.status == "published" and shown.updates[0].published_at == FIRED + timedelta(minutes=1)


def test_only_components_the_site_shows_make_incidents(db, tmp_path):
    config = config_with(tmp_path, components=("p/m1*",))
    draft_round(db, [Change(firing(scope=_scope("m0"), rule="slow"))], config, FIRED + timedelta(minutes=1))
    with db.connect() as conn:
        assert list_incidents(conn) == []


def test_the_providers_own_incident_links_and_identifies(db, tmp_path):
    config = config_with(tmp_path)
    draft_round(db, [Change(firing(scope=_scope("m0"), rule="slow"))], config, FIRED + timedelta(minutes=1))
    theirs = OfficialIncident(
        "p", "x1", "Degraded", "investigating", "minor", FIRED + timedelta(minutes=9), None, FIRED
    )
    store_incidents(db, "p", [theirs], FIRED + timedelta(minutes=10))
    draft_round(db, [], config, FIRED + timedelta(minutes=10))
    with db.connect() as conn:
        (incident,) = list_incidents(conn)
    assert incident.state == "identified" and incident.official_id == "x1"
    assert [u.kind for u in incident.updates] == ["detected", "identified"]


def test_people_update_and_resolve_and_a_resolved_incidents_alerts_open_nothing_new(db, tmp_path):
    config = config_with(tmp_path)
    page = firing(scope=_scope("m0"), rule="slow")
    draft_round(db, [Change(page)], config, FIRED + timedelta(minutes=1))
    with db.connect() as conn:
        (incident,) = list_incidents(conn)
    at = FIRED + timedelta(minutes=3)
    with db.begin() as conn:
        post_update(conn, incident.id, "A fix is rolling out.", now=at, state="monitoring", created_by="ana")
        resolve(conn, incident.id, now=at, created_by="ana")
        with pytest.raises(ValueError, match="already resolved"):
            resolve(conn, incident.id, now=at)
        with pytest.raises(IncidentNotFound):
            publish(conn, 999, at)
        with pytest.raises(ValueError, match="needs a message"):
            post_update(conn, incident.id, "  ", now=at)
    draft_round(db, [Change(page)], config, FIRED + timedelta(minutes=4))  # still firing: opens nothing
    with db.connect() as conn:
        (again,) = list_incidents(conn)
        assert again.state == "resolved"
        assert [(u.kind, u.state, u.created_by) for u in again.updates] == [
            ("detected", "investigating", None), ("update", "monitoring", "ana"), ("resolved", "resolved", "ana"),
        ]  # fmt: skip
        assert all(u.published for u in again.updates)  # a published incident's updates are public at once


def _scope(model: str):
    from monitor.alerts.scope import Scope

    return Scope("p", "r1", model, "short")


def test_a_failing_draft_never_stops_the_alerts_and_the_next_round_catches_up(db, tmp_path, monkeypatch, caplog):
    import monitor.incidents.store as incident_store

    config = config_with(tmp_path)
    page = firing(scope=_scope("m0"), rule="slow")
    draft_round(db, [Change(page)], config, FIRED + timedelta(minutes=1))
    real = incident_store.draft

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in drafting")

    monkeypatch.setattr(incident_store, "draft", broken)
    gone = replace(page, state=RESOLVED, resolved_at=FIRED + timedelta(minutes=5))
    assert draft_round(db, [Change(gone)], config, FIRED + timedelta(minutes=5)) == 0
    assert "drafting failed" in caplog.text
    with db.connect() as conn:
        assert conn.execute(select(Alert.__table__.c.state)).scalars().all() == ["resolved"]  # written all the same
        assert list_incidents(conn)[0].state == "investigating"
    monkeypatch.setattr(incident_store, "draft", real)
    draft_round(db, [], config, FIRED + timedelta(minutes=6))  # nothing changes: the alerts table says it
    with db.connect() as conn:
        (incident,) = list_incidents(conn)
    assert incident.state == "resolved" and incident.updates[-1].kind == "resolved"
