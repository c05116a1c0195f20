"""`kind: change` on labels: one alert per change, none for flapping or odd answers."""

from __future__ import annotations

from monitor.alerts.detectors.base import DetectorSettings
from monitor.alerts.detectors.detect import SeriesDetector


def feed(labels, for_evaluations=3, resolve_after=3, det=None, start=0):
    det = det or SeriesDetector(
        DetectorSettings(
            metric="served_by", kind="change", for_evaluations=for_evaluations, resolve_after=resolve_after
        )
    )
    return det, [det.observe(float(i), v) for i, v in enumerate(labels, start=start)]


def fired(evs):
    return [(e.timestamp, e.value_text, e.baseline_text) for e in evs if e.alarm_started]


def resolved(evs):
    return [(e.timestamp, e.new_normal, e.value_text) for e in evs if e.resolved]


def test_a_held_change_fires_once_with_new_and_old_then_is_accepted():
    _, evs = feed(["A"] * 5 + ["B"] * 10)
    assert fired(evs) == [(7.0, "B", "A")]
    assert resolved(evs) == [(10.0, True, "B")]


def test_steady_and_absent_labels_never_page():
    _, evs = feed(["A", None, "A", None] * 20)
    assert not fired(evs) and not resolved(evs)
    assert all(not e.evaluated for e in evs if e.value_text is None)


def test_flapping_sample_by_sample_never_fires():
    _, evs = feed(["A"] * 3 + ["B", "A"] * 30)
    assert fired(evs) == []


def test_alternating_after_a_change_is_one_alert_not_a_storm():
    # B holds three probes (fires), then the route flips back and forth: the same incident.
    _, evs = feed(["A"] * 3 + ["B"] * 3 + ["A", "B"] * 20 + ["B"] * 3)
    assert len(fired(evs)) == 1
    assert len(resolved(evs)) == 1 and resolved(evs)[0][1:] == (True, "B")


def test_returning_to_the_old_value_resolves_without_a_new_normal():
    _, evs = feed(["A"] * 3 + ["B"] * 3 + ["A"] * 3)
    assert len(fired(evs)) == 1
    assert resolved(evs) == [(8.0, False, "A")]


def test_a_second_real_change_pages_again():
    _, evs = feed(["A"] * 3 + ["B"] * 6 + ["C"] * 6)
    assert [f[1:] for f in fired(evs)] == [("B", "A"), ("C", "B")]


def test_checkpoint_round_trip_reproduces_the_run():
    labels = ["A"] * 3 + ["B"] * 2
    det, _ = feed(labels)
    restored = SeriesDetector.from_state(det.settings, det.to_state())
    _, evs = feed(["B"] * 4, det=restored, start=len(labels))
    assert fired(evs) and fired(evs)[0][1:] == ("B", "A")


def test_numbers_are_not_labels():
    _, evs = feed([1.0, 2.0, 3.0])
    assert not any(e.evaluated for e in evs)
