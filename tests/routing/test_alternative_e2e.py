"""The alternative in a route alert, and `routes --watch`, end to end on the live rig: alt-a (40 ms)
slows to 1.2 s; the threshold alert on it names alt-b, the other route of its canonical model, with
its p50 and availability, in the webhook body and its summary; `routes --watch --json` meanwhile
prints the two routes swapping ranks, and nothing for the routes that did not change."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from tests.alerts.service_proc import ROOT
from tests.routing.live_rig import ALT_CANONICAL, wait_until

pytestmark = pytest.mark.slow


def test_a_slow_route_pages_with_the_other_route_as_alternative_and_watch_prints_the_swap(live_rig):
    watch = subprocess.Popen(
        [sys.executable, "-m", "monitor", "routes", "--config", str(live_rig.config), "--json",
         "--window", "4s", "--watch", "0.5s"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: list[dict] = []

    def read() -> None:
        for line in watch.stdout:
            lines.append(json.loads(line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert wait_until(lambda: len(lines) >= 4, 30), watch.stderr.read() if watch.poll() is not None else lines
        first = list(lines)
        assert all("change" not in r for r in first) and len(first) == 4  # the ranking once, in full
        live_rig.set("alt-a", ttft_ms=1200)
        page = live_rig.hooks.wait_for(
            lambda r: any(b.json().get("scope", {}).get("provider") == "alt-a" for b in r.accepted), 40
        )
        assert page, live_rig.service.log()[-3000:]
        assert wait_until(lambda: any(r.get("change") for r in lines), 20), lines
    finally:
        live_rig.set("alt-a", ttft_ms=40)
        watch.terminate()
        watch.wait(10)
    bodies = [b.json() for b in live_rig.hooks.accepted if b.json().get("scope", {}).get("provider") == "alt-a"]
    body = next(b for b in bodies if b["status"] == "firing")
    alternative = body["alternative"]
    assert alternative["target"].startswith("alt-b/") and alternative["availability"] == 1.0
    assert alternative["ttft_ms"]["p50"] == pytest.approx(160, abs=40)
    assert f"consider alt-b/{live_rig.models['alt-b']}@local: p50 " in body["summary"]
    assert body["summary"].endswith(", 100%")
    changed = [r for r in lines[4:] if r.get("change")]
    assert {(r["provider"], r["change"]) for r in changed[:2]} == {("alt-a", "rank"), ("alt-b", "rank")}
    assert {r["model"] for r in changed} == {ALT_CANONICAL}  # the steady pair printed nothing
