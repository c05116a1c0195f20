"""Signed subscription links (monitor.subscriptions.tokens): purpose, address and expiry are bound in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monitor.subscriptions.tokens import (
    CONFIRM,
    CONFIRM_TTL,
    SECRET_ENV,
    UNSUBSCRIBE,
    link_secret,
    make_token,
    read_token,
    webhook_key,
)

NOW = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
SECRET = b"k" * 32


def test_a_token_holds_for_its_purpose_address_and_time_only():
    token = read_token(make_token(SECRET, CONFIRM, 12, "a@example.com", NOW))
    assert token.subscriber_id == 12 and token.issued == NOW
    assert token.valid(SECRET, CONFIRM, "a@example.com", NOW + timedelta(days=6), CONFIRM_TTL)
    assert not token.valid(SECRET, CONFIRM, "a@example.com", NOW + CONFIRM_TTL + timedelta(seconds=1), CONFIRM_TTL)
    assert not token.valid(SECRET, UNSUBSCRIBE, "a@example.com", NOW), "a confirm token does not unsubscribe"
    assert not token.valid(SECRET, CONFIRM, "b@example.com", NOW, CONFIRM_TTL), "nor confirm another address"
    assert not token.valid(b"other", CONFIRM, "a@example.com", NOW, CONFIRM_TTL)
    forever = read_token(make_token(SECRET, UNSUBSCRIBE, 12, "a@example.com"))
    assert forever.issued is None and forever.valid(SECRET, UNSUBSCRIBE, "a@example.com", NOW + timedelta(days=900))


def test_altered_or_malformed_tokens_are_refused():
    text = make_token(SECRET, CONFIRM, 12, "a@example.com", NOW)
    ident, issued, mac = text.split(".")
    for altered in (f"13.{issued}.{mac}", f"{ident}.{int(issued, 16) + 1:x}.{mac}", f"{ident}.{issued}.{mac[:-1]}A"):
        token = read_token(altered)
        assert token is None or not token.valid(SECRET, CONFIRM, "a@example.com", NOW, CONFIRM_TTL), altered
    for malformed in (None, "", "x", "1.2", "a.0." + "x" * 32, "1.zz." + "x" * 32, "1.0." + "x" * 300):
        assert read_token(malformed) is None


def test_the_secret_comes_from_the_environment_or_is_made_once_in_the_database(db):
    assert link_secret(db, {SECRET_ENV: "from-the-env"}) == b"from-the-env"
    made = link_secret(db, {})
    assert len(made) >= 32 and link_secret(db, {}) == made  # kept: every agent signs with the same
    assert webhook_key(made, 1, "https://x/") != webhook_key(made, 2, "https://x/")
