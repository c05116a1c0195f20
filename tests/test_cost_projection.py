"""What probing costs, before it runs: `check-config`'s monthly projection and `budget`."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from monitor.commands.check_config import check_config_command
from monitor.config import load_config_text
from monitor.probe.cost import MONTH_S, NONCE_TOKENS, project_monthly
from monitor.probe.tokens import count_o200k

REPO = Path(__file__).resolve().parents[1]
KEYS = {k: "sk-test" for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY")}


def test_check_config_prints_a_monthly_projection_for_small_vs_flagship() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = check_config_command(str(REPO / "examples" / "small-vs-flagship.yaml"), out, err, KEYS)
    assert code == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    start = lines.index("projected monthly cost (upper bound: whole prompt uncached, max_tokens generated, 30 days):")
    rows = {line.split()[0]: line.split()[1:] for line in lines[start + 1 : start + 6]}
    assert set(rows) == {"anthropic", "gemini", "openai", "openrouter", "total"}
    assert rows["openrouter"][-2:] == ["(6", "targets)"]
    total = float(rows["total"][-1].lstrip("$").replace(",", ""))
    parts = sum(
        float(rows[p][-3].lstrip("$").replace(",", "")) for p in ("anthropic", "gemini", "openai", "openrouter")
    )
    assert abs(total - parts) < 0.02 and total > 0


def _config(budget: dict | None, interval: str = "1m", max_tokens: int = 1000) -> str:
    config = {
        "database": "sqlite:///unused.db",
        "providers": {
            "p": {"protocol": "openai-chat", "regions": {"r": "http://127.0.0.1:9"}, "models": ["m", "free"]}
        },
        "prompts": {
            "q": {"messages": [{"role": "user", "content": "Explain TTFT in one sentence."}], "max_tokens": max_tokens}
        },
        "checks": [{"providers": ["p"], "prompts": ["q"], "interval": interval}],
        "prices": {"p/m": {"input": 2.0, "output": 10.0}},
    }
    if budget is not None:
        config["budget"] = budget
    return json.dumps(config)


def test_projection_is_schedule_times_prompt_and_max_tokens(tmp_path) -> None:
    config = load_config_text(_config(None), base_dir=tmp_path, env={})
    projection = project_monthly(config)
    prompt = count_o200k("Explain TTFT in one sentence.") + NONCE_TOKENS
    probes = MONTH_S / 60
    expected = probes * (prompt * 2.0 + 1000 * 10.0) / 1e6
    assert abs(projection.per_provider_usd["p"] - expected) < 1e-6
    assert projection.unpriced == ("p/free@r:q",)  # listed, never counted as free


def test_reasoning_budget_counts_as_output(tmp_path) -> None:
    plain = project_monthly(load_config_text(_config(None), base_dir=tmp_path, env={})).total_usd
    spec = json.loads(_config(None))
    spec["prompts"]["q"]["reasoning"] = {"budget_tokens": 4000}
    thinking = project_monthly(load_config_text(json.dumps(spec), base_dir=tmp_path, env={})).total_usd
    assert abs(thinking - plain * (1 + 4000 * 10.0 / (1000 * 10.0 + 12 * 2.0))) / thinking < 0.01


def _run(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    path = tmp_path / "firsttoken.yaml"
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "monitor", "run", "--config", str(path), "--listen", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )


def test_budget_refuse_stops_run_with_exit_2_and_one_line(tmp_path) -> None:
    # 43,200 probes a month x ~$0.01 each: ~$432, over a $100 budget
    done = _run(tmp_path, _config({"monthly_usd": 100, "action": "refuse"}))
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("firsttoken run: projected monthly cost $4") and "exceeds budget.monthly_usd $100.00" in line
    assert line.endswith("not starting (budget.action refuse)")
    assert not (tmp_path / "unused.db").exists()  # refused before touching anything


def test_budget_within_or_warn_does_not_refuse(tmp_path) -> None:
    out = io.StringIO()
    path = tmp_path / "c.yaml"
    path.write_text(_config({"monthly_usd": 100, "action": "warn"}))
    assert check_config_command(str(path), out, io.StringIO(), {}) == 0
    assert "budget: $100.00/month, action warn: projection over: warn" in out.getvalue()
    path.write_text(_config({"monthly_usd": 100_000, "action": "refuse"}))
    out = io.StringIO()
    assert check_config_command(str(path), out, io.StringIO(), {}) == 0
    assert "budget: $100,000.00/month, action refuse: projection within" in out.getvalue()


def test_budget_warn_says_so_and_goes_on(tmp_path) -> None:
    done = _run(tmp_path, _config({"monthly_usd": 100, "action": "warn"}))
    lines = done.stderr.splitlines()
    assert lines[0].startswith("firsttoken run: warning: projected monthly cost $4")
    # ...and went on to the next check: this database was never migrated
    assert done.returncode == 1 and "db upgrade" in done.stderr
