"""Signed alert links (monitor.alerts.signing): what a signature covers, when it expires, where the key lives."""

from __future__ import annotations

import threading
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from monitor.alerts.signing import (
    CHART,
    CHART_TTL,
    SECRET_ENV,
    SILENCE,
    SILENCE_TTL,
    AlertLinks,
    alert_links,
    link_secret,
    sign,
    valid,
)
from monitor.config import Config

from .helpers import T0

SECRET = b"s" * 32


def params(url: str) -> tuple[str, str, str]:
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    return parts.path, query["exp"][0], query["sig"][0]


def test_a_link_is_valid_until_it_expires_and_for_its_own_alert_and_purpose_only():
    links = AlertLinks("https://ft.example:9464/", SECRET)
    path, exp, sig = params(links.chart_url(42, T0))
    assert path == "/alerts/42/chart.png" and int(exp) == int((T0 + CHART_TTL).timestamp())
    assert valid(SECRET, CHART, 42, exp, sig, T0)
    assert valid(SECRET, CHART, 42, exp, sig, T0 + CHART_TTL - timedelta(seconds=1))
    assert not valid(SECRET, CHART, 42, exp, sig, T0 + CHART_TTL)  # expired
    assert not valid(SECRET, CHART, 43, exp, sig, T0)  # another alert
    assert not valid(SECRET, SILENCE, 42, exp, sig, T0)  # a chart link opens no silence
    assert not valid(SECRET, CHART, 42, str(int(exp) + 86400), sig, T0)  # a later expiry, same signature
    assert not valid(b"t" * 32, CHART, 42, exp, sig, T0)  # another server's key
    altered = sig[:-1] + ("A" if sig[-1] != "A" else "B")
    assert not valid(SECRET, CHART, 42, exp, altered, T0)
    for bad_exp, bad_sig in ((None, sig), (exp, None), ("", sig), ("12a", sig), ("9" * 30, sig), (exp, sig + "x")):
        assert not valid(SECRET, CHART, 42, bad_exp, bad_sig, T0)
    s_path, s_exp, s_sig = params(links.silence_url(42, T0))
    assert s_path == "/alerts/42/silence" and int(s_exp) == int((T0 + SILENCE_TTL).timestamp())
    assert valid(SECRET, SILENCE, 42, s_exp, s_sig, T0) and s_sig == sign(SECRET, SILENCE, 42, int(s_exp))


def test_the_secret_is_the_environments_else_one_made_once_in_the_database(db):
    assert link_secret(db, {SECRET_ENV: "  from-the-env  "}) == b"from-the-env"
    made: list[bytes] = []
    threads = [threading.Thread(target=lambda: made.append(link_secret(db, {}))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(made)) == 1 and len(made[0]) >= 32  # every agent on the database signs alike
    assert link_secret(db, {}) == made[0]
    with pytest.raises(LookupError):
        link_secret(None, {})


def test_no_public_url_no_links(db):
    assert alert_links(db, Config()) is None
    links = alert_links(db, Config(public_url="https://ft.example"), {SECRET_ENV: "link-key-7f3a"})
    assert links == AlertLinks("https://ft.example", b"link-key-7f3a")
    assert "link-key" not in repr(links)
