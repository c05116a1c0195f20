"""The mute stage (monitor.alerts.muting), pure: silences and maintenance windows mark alerts muted."""

from __future__ import annotations

from monitor.alerts.muting import mute

from .helpers import alert, keyed, target_scope


class Mute:
    """A silence or maintenance window as the stage sees it: a kind and which scopes it mutes."""

    def __init__(self, kind: str, region: str | None = None) -> None:
        self.kind, self.region = kind, region
        self.asked: list = []

    def mutes(self, scope) -> bool:
        self.asked.append(scope)
        return self.region is None or scope.region == self.region


def test_a_mute_that_applies_marks_the_alert_muted_and_silenced_by_its_kind():
    r1, r2 = alert(scope=target_scope(region="r1")), alert(scope=target_scope(region="r2"))
    silence = Mute("silence", region="r1")
    out = mute(keyed(r1, r2), [silence])
    assert (out[("slow", r1.scope.key)].muted, out[("slow", r1.scope.key)].silenced) == ("silence", True)
    assert out[("slow", r2.scope.key)] is r2
    assert silence.asked == [r1.scope, r2.scope]
    (maintained,) = mute(keyed(r1), [Mute("maintenance")]).values()
    assert (maintained.muted, maintained.silenced) == ("maintenance", True)
    # Only the mark changes: state and notification bookkeeping are the alert's own.
    assert maintained.state == "firing" and maintained.last_notified_at is None and maintained.fired_at == r1.fired_at


def test_the_first_mute_that_applies_wins():
    record = alert()
    (first,) = mute(keyed(record), [Mute("silence", region="r9"), Mute("maintenance"), Mute("silence")]).values()
    assert first.muted == "maintenance"
    (other,) = mute(keyed(record), [Mute("silence"), Mute("maintenance")]).values()
    assert other.muted == "silence"


def test_muted_and_silenced_are_cleared_when_no_mute_applies():
    was = alert(muted="silence", silenced=True)
    for mutes in ([], [Mute("silence", region="r9")]):
        (out,) = mute(keyed(was), mutes).values()
        assert (out.muted, out.silenced) == (None, False)
    # A row silenced without saying by what is cleared too, and one muted by another kind changes kind.
    (legacy,) = mute(keyed(alert(silenced=True)), []).values()
    assert (legacy.muted, legacy.silenced) == (None, False)
    (changed,) = mute(keyed(was), [Mute("maintenance")]).values()
    assert (changed.muted, changed.silenced) == ("maintenance", True)


def test_an_unchanged_alert_is_the_same_object():
    plain, muted = alert(), alert(scope=target_scope("m2"), muted="silence", silenced=True)
    out = mute(keyed(plain, muted), [Mute("silence", region="r1")])
    assert out[("slow", muted.scope.key)] is muted
    assert mute(keyed(plain), [])[("slow", plain.scope.key)] is plain
    assert list(out) == list(keyed(plain, muted))
