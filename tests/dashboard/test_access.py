"""No traceback ever: empty, unmigrated and unreachable databases get a one-line message;
the password gate keeps the SRE pages and leaves Provider health open."""

from __future__ import annotations

import pytest

from monitor.storage import migrate
from monitor.storage.db import make_engine
from tests.dashboard.figures import problems

PAGES = ("overview", "trends", "compare", "timeline", "health", "alerts", "samples", "reports")


def _all_pages(first):
    for page in PAGES:
        yield page, first.switch_page(f"pages/{page}.py").run()


def test_empty_database_says_no_samples_yet(app, tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    migrate.upgrade(make_engine(url))
    for page, at in _all_pages(app(url).run()):
        assert not at.exception, (page, [e.value for e in at.exception])
        assert any("No samples in this database yet" in i.value for i in at.info), page


@pytest.mark.postgres
def test_empty_postgres_database_says_no_samples_yet(app, pg_server):
    from tests.pg import pg_url

    url = pg_url(pg_server.create_database())
    engine = make_engine(url)
    migrate.upgrade(engine)
    engine.dispose()
    for page, at in _all_pages(app(url).run()):
        assert not at.exception, page
        assert any("No samples in this database yet" in i.value for i in at.info), page


def test_unmigrated_database_says_what_to_run(app, tmp_path):
    url = f"sqlite:///{tmp_path / 'bare.db'}"
    for page, at in _all_pages(app(url).run()):
        assert not at.exception, page
        assert any("firsttoken db upgrade" in w.value for w in at.warning), page


def test_database_down_is_one_line_not_a_traceback(app):
    # Nothing listens on port 1: the connection is refused at once.
    url = "postgresql+psycopg://firsttoken@127.0.0.1:1/firsttoken"
    for page, at in _all_pages(app(url).run()):
        assert not at.exception, page
        messages = [w.value for w in at.warning] + [e.value for e in at.error]
        assert any("cannot open database" in m or "cannot read the database" in m for m in messages), page
        assert all("\n" not in m.strip() for m in messages)


def test_database_going_down_after_start_shows_an_error(app, seeded, monkeypatch):
    """Schema check passed, then a query fails: the page says so in one line."""
    from dashboard import data

    url, _ = seeded
    at = app(url).run()

    def broken(*args, **kwargs):
        raise data.Unavailable("cannot read the database test: connection refused")

    monkeypatch.setattr(data, "overview_data", broken)
    at.run()
    assert not at.exception
    assert any("connection refused" in e.value for e in at.error)


def test_password_gates_every_page_but_health(app, seeded):
    url, _ = seeded
    at = app(url, password="s3cret").run()
    assert not at.exception
    assert at.text_input, "the sign-in page shows a password field"
    assert not at.get("plotly_chart")
    at.switch_page("pages/health.py").run()
    assert not problems(at)
    assert at.get("plotly_chart"), "provider health is public"
    for page in ("overview", "trends", "alerts", "samples"):
        with pytest.raises(ValueError, match="Could not find a navigation page"):  # not offered while signed out
            at.switch_page(f"pages/{page}.py").run()


def test_wrong_then_right_password(app, seeded):
    url, _ = seeded
    at = app(url, password="s3cret").run()
    at.text_input(key="login-password").input("nope")
    at.button(key="login-submit").click().run()
    assert any("Wrong password" in e.value for e in at.error)
    at.text_input(key="login-password").input("s3cret")
    at.button(key="login-submit").click().run()
    assert not problems(at)
    assert at.title[0].value == "Overview"
