"""Snippets that cannot rot: what the README and docs/ show is run here.

- Every ```yaml block is config and loads as config. A fragment (`prompts:` alone, one provider
  under its name) is completed with a stub provider, prompt or check, the way a reader would paste
  it into their file. A YAML block that is another file (a compose file, a Prometheus config) says
  so with a title: ```yaml title="deploy/prometheus/prometheus.yml"```; it must still parse.
- Every `firsttoken` command shown in a shell block names a real subcommand. Those that need no
  provider, network or running service are run. A ```console block runs whole, `$ ` line after line,
  unless one of its commands is online; output shown under a command must be what it prints, and a
  command shown without output must exit 0. In ```sh blocks the self-contained commands
  (`check-config`, `schema`, `backtest`) must exit 0; commands reading a database are run only in
  console blocks, which set up the database they read (`demo --backfill-only`). Everything runs in a
  scratch directory holding a copy of examples/ and, as firsttoken.yaml, the page's first complete
  config snippet (the README's minimal config for a page without one), with no provider keys set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from monitor.cli import COMMANDS
from monitor.config import DEFER, load_config_text
from monitor.config.editor import json_schema

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.S | re.M)
SHELLS = ("sh", "bash", "shell", "console")
# Subcommands that need nothing outside the repository: run wherever shown.
SELF_CONTAINED = {"check-config", "schema", "backtest"}
# Offline but reading (or writing) a database: run in console blocks, which set the database up.
STATEFUL = {"samples", "routes", "silence", "maintenance", "incident", "db", "slo", "status"}
# Those that talk to providers or serve until stopped: shown, not run (`demo --backfill-only` is stateful,
# any `--watch` is not).
# `report`: its figures need weeks of samples and `--send` mails; tests/reports/test_*_docs.py run
# the Reports page's commands on data they plant.
ONLINE = {"demo", "run", "probe", "dashboard", "simulate", "mcp", "notify", "report"}
STUB_PROVIDER = {"protocol": "openai-chat", "regions": {"global": "http://127.0.0.1:1/v1"}, "models": ["m"]}
STUB_PROMPT = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "FIRSTTOKEN_DATABASE_URL")


@dataclass(frozen=True)
class Snippet:
    page: Path
    line: int
    lang: str
    info: str
    body: str

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def snippets(*langs: str) -> list[Snippet]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            if m.group(1) in langs:
                line = text.count("\n", 0, m.start()) + 1
                found.append(Snippet(page, line, m.group(1), m.group(2).strip(), m.group(3)))
    return found


def as_config(tree: object) -> dict | None:
    """The file a snippet stands for, or None when it is not firsttoken config."""
    if not isinstance(tree, dict) or not tree:
        return None
    if set(tree) <= set(json_schema()["properties"]):
        config = dict(tree)
    elif all(isinstance(v, dict) and "protocol" in v for v in tree.values()):
        config = {"providers": tree}  # providers by name, as the Protocols page shows them
    else:
        return None
    config.setdefault("providers", _stub_providers(config))
    config.setdefault("prompts", dict.fromkeys(_prompts_named(config) or ["stub"], STUB_PROMPT))
    config.setdefault("checks", [{"providers": sorted(config["providers"]), "prompts": sorted(config["prompts"])}])
    return config


def _prompts_named(config: dict) -> list[str]:
    """The prompts a fragment's selectors name (an SLO's or a rule's `match: {prompt: short}`)."""
    named = set()
    for entry in [*(config.get("silences") or []), *(config.get("alerts") or []), *(config.get("slos") or [])]:
        prompt = (entry.get("match") or {}).get("prompt")
        if isinstance(prompt, str) and not set(prompt) & set("*?["):
            named.add(prompt)
    return sorted(named)


def _stub_providers(config: dict) -> dict:
    """Stand-ins for the providers a fragment names (`prices:` keys, a silence's `match:`)."""
    models: dict[str, set[str]] = {"stub": {"m"}}
    regions: dict[str, set[str]] = {}
    for key in config.get("prices") or {}:
        provider, _, model = key.partition("/")
        models.setdefault(provider, set()).add(model)
    for report in config.get("reports") or []:  # a `reports:` entry names the providers it covers
        for provider in report.get("providers") or []:
            models.setdefault(provider, {"m"})
    for entry in [*(config.get("silences") or []), *(config.get("alerts") or []), *(config.get("slos") or [])]:
        match = entry.get("match") or {}
        provider = match.get("provider")
        if provider and not set(provider) & set("*?["):
            models.setdefault(provider, {"m"})
            regions.setdefault(provider, {"global"}).add(match.get("region") or "global")
    url = STUB_PROVIDER["regions"]["global"]
    return {
        name: {
            **STUB_PROVIDER,
            "models": sorted(ids),
            "regions": dict.fromkeys(sorted(regions.get(name, {"global"})), url),
        }
        for name, ids in models.items()
    }


def _json_ready(value):
    """YAML timestamps (a silence's `until:`) as the ISO strings the loader takes."""
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    return value.isoformat() if hasattr(value, "isoformat") else value


YAML_SNIPPETS = snippets("yaml", "yml")


def test_the_docs_have_config_snippets():
    assert len(YAML_SNIPPETS) >= 20 and {s.page.name for s in YAML_SNIPPETS} >= {"README.md", "protocols.md"}


@pytest.mark.parametrize("snippet", YAML_SNIPPETS, ids=lambda s: s.id)
def test_every_yaml_snippet_loads_as_config(snippet: Snippet) -> None:
    tree = yaml.safe_load(snippet.body)
    if "title=" in snippet.info:  # another file's YAML, named: it parses, and is not config
        assert tree is not None
        return
    config = as_config(tree)
    assert config is not None, f"{snippet.id}: not firsttoken config; if it is another file, give it a title="
    # Relative prompt files resolve as in examples/ (prompts/rag-2k.txt); credentials stay unset,
    # as for `check-config`, so no snippet needs a key to load.
    loaded = load_config_text(json.dumps(_json_ready(config)), base_dir=ROOT / "examples", env={}, secrets=DEFER)
    assert loaded.targets


def _page_config(page: Path) -> str:
    """The page's first complete config (providers and checks), else the README's."""
    for source in (page, ROOT / "README.md"):
        for snippet in snippets("yaml"):
            if snippet.page == source and "title=" not in snippet.info:
                tree = yaml.safe_load(snippet.body)
                if isinstance(tree, dict) and {"providers", "checks"} <= set(tree):
                    return snippet.body
    raise AssertionError("the README has no complete config snippet")


def _commands(snippet: Snippet) -> list[tuple[str, list[str]]]:
    """(command, the output shown after it) for a console block; (command, []) for the others."""
    text = re.sub(r"\\\n\s*", "", snippet.body)  # continuation lines
    if snippet.lang != "console":
        return [(line.strip(), []) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            found.append((line[2:], []))
        elif found and line.strip():
            found[-1][1].append(line.rstrip())
    return found


def _subcommand(command: str) -> str | None:
    m = re.search(r"(?:^|[\s;&|(])(?:firsttoken|python -m monitor)\s+(?:--\S+\s+)*([a-z][\w-]*)", command)
    return m.group(1) if m else None


SHELL_SNIPPETS = snippets(*SHELLS)


def test_every_command_shown_is_a_real_one_and_classified():
    shown = {_subcommand(c) for s in SHELL_SNIPPETS for c, _ in _commands(s)} - {None}
    assert shown, "no firsttoken command in any shell block"
    assert shown <= set(COMMANDS), f"not firsttoken commands: {shown - set(COMMANDS)}"
    unclassified = set(COMMANDS) - SELF_CONTAINED - STATEFUL - ONLINE
    assert not unclassified, f"put {sorted(unclassified)} in SELF_CONTAINED, STATEFUL or ONLINE above"


def _kind(command: str) -> str | None:
    sub = _subcommand(command)
    if sub == "demo" and "--backfill-only" in command.split():
        return "stateful"
    if "--watch" in command.split():
        return "online"  # polls until stopped
    return {**dict.fromkeys(SELF_CONTAINED, "self"), **dict.fromkeys(STATEFUL, "stateful")}.get(sub, sub and "online")


def _to_run(snippet: Snippet) -> list[tuple[str, list[str]]]:
    """A console block whole unless it needs something online; in other blocks, the self-contained commands."""
    commands = _commands(snippet)
    kinds = {_kind(c) for c, _ in commands} - {None}
    if snippet.lang == "console":
        if "title=" in snippet.info:
            return []  # output from data the page describes (a titled block); the page's own test runs it
        return commands if kinds and "online" not in kinds else []
    return [c for c in commands if _kind(c[0]) == "self"]


def test_some_console_blocks_run_with_their_output():
    runs = [s for s in SHELL_SNIPPETS if s.lang == "console" and _to_run(s)]
    assert len(runs) >= 3 and any(shown for s in runs for _, shown in _to_run(s))


@pytest.mark.parametrize("snippet", [s for s in SHELL_SNIPPETS if _to_run(s)], ids=lambda s: s.id)
def test_offline_commands_run_as_shown(snippet: Snippet, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    worked_example = snippet.page.with_suffix("")  # docs/slos/ beside docs/slos.md: "run in docs/slos/"
    if (worked_example / "firsttoken.yaml").is_file():
        shutil.copytree(worked_example, tmp_path, dirs_exist_ok=True)
    else:
        (tmp_path / "firsttoken.yaml").write_text(_page_config(snippet.page))
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for command, shown in _to_run(snippet):
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        printed = [line.rstrip() for line in (done.stdout + done.stderr).splitlines()]
        if shown:
            missing = [line for line in shown if line not in printed and line != "..."]  # "..." elides
            assert missing == [], f"{snippet.id}: `{command}` no longer prints these lines:\n" + "\n".join(missing)
        else:
            assert done.returncode == 0, f"{snippet.id}: `{command}` exited {done.returncode}: {done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr, done.stderr


# ------------------------------------------------------------------ the README, as a newcomer runs it
NEEDS = re.compile(r"#.*\bneeds ([A-Z][A-Z0-9_]+(?:(?:,| and) [A-Z][A-Z0-9_]+)*)")
SIM_KEY = "sk-readme-test"


def _readme_commands() -> list[tuple[str, set[str]]]:
    """Each `firsttoken` command of the README's shell blocks, with the variables its comment says it
    needs (`# needs OPENAI_API_KEY`); a command with no such comment is documented as needing none."""
    found = []
    for snippet in snippets(*SHELLS):
        if snippet.page.name != "README.md":
            continue
        for command, _ in _commands(snippet):
            if _subcommand(command):
                m = NEEDS.search(command)
                found.append((command, set(re.findall(r"[A-Z][A-Z0-9_]+", m.group(1))) if m else set()))
    return found


@pytest.fixture
def simulator():
    """The project's simulated providers on a free port, accepting only SIM_KEY (a probe sending no key,
    or another, gets 401): the stand-in for the providers the README's config names."""
    process = subprocess.Popen(
        [sys.executable, "-m", "monitor", "simulate", "--port", "0", "--api-key", SIM_KEY],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )
    try:
        line = process.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert m, f"the simulator did not start: {line!r}"
        yield f"http://127.0.0.1:{m.group(1)}"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_readme_commands_run_with_only_the_variables_it_names(simulator, tmp_path):
    """README's minimal config, its provider URL pointed at the simulator: every `firsttoken` command the
    README shows that needs no running service exits 0 with only the variables its comment names
    (check-config: none; probe: OPENAI_API_KEY, not the webhook's secret). `run` and `demo` are shown
    elsewhere (Getting started's tests, the demo's)."""
    commands = [(c, needs) for c, needs in _readme_commands() if _subcommand(c) in ("check-config", "probe")]
    assert [_subcommand(c) for c, _ in commands] == ["check-config", "probe"]
    config = _page_config(ROOT / "README.md").replace("https://api.openai.com/v1", f"{simulator}/v1")
    assert simulator in config
    (tmp_path / "firsttoken.yaml").write_text(config)
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("FIRSTTOKEN_") and not k.endswith(("_API_KEY", "_SECRET", "_ROUTING_KEY", "_URL"))
    }
    base["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), base.get("PATH", "")])
    for command, needs in commands:
        env = base | dict.fromkeys(needs, SIM_KEY)
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (
            f"`{command}` with only {sorted(needs)} set exited {done.returncode}: {done.stderr}"
        )
        assert "Traceback" not in done.stderr and SIM_KEY not in done.stdout + done.stderr
        if _subcommand(command) == "probe":
            assert done.stdout.count(" ok ") == 2, done.stdout  # both models answered, with the key it sent


def test_the_readme_compose_path_copies_files_that_exist_and_load(tmp_path):
    """`cp examples/… firsttoken.yaml` and `cp deploy/firsttoken.env.example firsttoken.env`, as README
    shows them before `docker compose up -d`, in a fresh copy: both exist, and the config loads there."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "deploy", tmp_path / "deploy")
    copies = [
        c for s in snippets(*SHELLS) if s.page.name == "README.md" for c, _ in _commands(s) if c.startswith("cp ")
    ]
    assert any("firsttoken.env" in c for c in copies) and any("firsttoken.yaml" in c for c in copies)
    for command in copies:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, f"`{command}`: {done.stderr}"
    env = {k: v for k, v in os.environ.items() if k not in KEYS} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "monitor", "check-config"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
