"""`kind: change`: a label (served_by, model_version, system_fingerprint,
answer_fingerprint) leaves its established value and the new one holds (DESIGN §5, §10).

Pure. Fed one label per successful probe (None: the response named nothing,
which says nothing about a change and is not evaluated).

- The first label seen is the established value.
- A different label must hold `for_evaluations` probes in a row to fire:
  one odd answer, or a route flapping between two upstreams sample by
  sample, never pages. The alert's `value` is the new label, `baseline`
  the established one.
- While firing, the alert stays one alert whatever the series does: flipping
  back and forth between the old and the new value is the same incident, not a
  storm of pages. It resolves once one label has held `resolve_after` probes in
  a row: that label becomes the established value (`new_normal` when it is not
  the old one: the change was accepted).
"""

from __future__ import annotations

from typing import Any

from monitor.alerts.detectors.base import FIRING, OK, PENDING, DetectorSettings, Evaluation

STATE_VERSION = 1


class ChangeDetector:
    kind = "change"

    def __init__(self, settings: DetectorSettings) -> None:
        self.settings = settings
        self.established: str | None = None
        self.candidate: str | None = None  # the label holding now, when it is not the established one
        self.run = 0  # probes in a row carrying `candidate` (firing: carrying the latest label)
        self.state = OK
        self.latest: str | None = None  # firing: the newest label seen
        self.old: str | None = None  # firing: the established label when it fired

    # SeriesDetector reads `.life.state`; a change rule has no Lifecycle, only the state.
    @property
    def life(self) -> ChangeDetector:
        return self

    def observe(self, ts: float, value: Any) -> Evaluation:
        label = value if isinstance(value, str) and value else None
        if label is None:
            return Evaluation(ts, self.state, evaluated=False)
        if self.established is None:
            self.established = label
            return Evaluation(ts, self.state, value_text=label, baseline_text=label)
        if self.state == FIRING:
            return self._while_firing(ts, label)
        if label == self.established:
            self.state, self.candidate, self.run = OK, None, 0
            return Evaluation(ts, OK, value_text=label, baseline_text=self.established)
        self.run = self.run + 1 if label == self.candidate else 1
        self.candidate = label
        if self.run >= max(1, self.settings.for_evaluations):
            self.state, self.old, self.latest, self.run = FIRING, self.established, label, 0
            return Evaluation(ts, FIRING, True, alarm_started=True, value_text=label, baseline_text=self.established)
        self.state = PENDING
        return Evaluation(ts, PENDING, True, value_text=label, baseline_text=self.established)

    def _while_firing(self, ts: float, label: str) -> Evaluation:
        self.run = self.run + 1 if label == self.latest else 1
        self.latest = label
        if self.run >= max(1, self.settings.resolve_after):
            accepted = label != self.old
            old = self.old
            self.established, self.state, self.candidate, self.run, self.old = label, OK, None, 0, None
            return Evaluation(ts, OK, False, resolved=True, new_normal=accepted, value_text=label, baseline_text=old)
        # Still the same incident: `value` stays the new label the alert fired on
        # unless a third one took over.
        shown = label if label != self.old else self.candidate
        return Evaluation(ts, FIRING, label != self.old, value_text=shown, baseline_text=self.old)

    def to_state(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "kind": self.kind,
            "established": self.established,
            "candidate": self.candidate,
            "run": self.run,
            "state": self.state,
            "latest": self.latest,
            "old": self.old,
        }

    @classmethod
    def from_state(cls, settings: DetectorSettings, state: dict[str, Any]) -> ChangeDetector:
        det = cls(settings)
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION or state.get("kind") != cls.kind:
            return det
        det.established = _text(state.get("established"))
        det.candidate = _text(state.get("candidate"))
        det.latest = _text(state.get("latest"))
        det.old = _text(state.get("old"))
        det.run = int(state.get("run") or 0)
        det.state = state.get("state") if state.get("state") in (OK, PENDING, FIRING) else OK
        return det


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
