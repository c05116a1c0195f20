"""deploy/grafana: every metric a panel reads exists in a real scrape, or is one of our recording rules
over names that do; every query runs on the real Prometheus."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.integrations.conftest import ROOT, wait_for
from tests.integrations.promql import label_values_metric, metric_names

pytestmark = pytest.mark.integration
DASHBOARD = ROOT / "deploy/grafana/dashboards/firsttoken.json"
RULES = sorted((ROOT / "deploy/prometheus/rules").glob("*.yml"))
SYNTHETIC = {"up"}  # series Prometheus makes itself for each scrape


def panel_exprs(dashboard: dict) -> list[str]:
    exprs = []
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            exprs.append(target["expr"])
    return exprs


def recording_rules() -> dict[str, str]:
    out = {}
    for path in RULES:
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                if "record" in rule:
                    out[rule["record"]] = rule["expr"]
    return out


def scraped_names(scrape: str) -> set[str]:
    return {m.group(1) for m in re.finditer(r"^([A-Za-z_:][A-Za-z0-9_:]*)[{ ]", scrape, re.M)}


def test_the_promql_reader_finds_names_not_labels_or_functions():
    expr = (
        'histogram_quantile(0.9, sum by (provider, le) (rate(a_bucket{model=~"x|y", z="{b}"}[5m:1m]))) '
        '/ on (provider) group_left(region) b:rec:p50 offset 1h > bool 2 or {__name__="c_total"} unless $var'
    )
    assert metric_names(expr) == {"a_bucket", "b:rec:p50", "c_total"}
    assert label_values_metric('label_values(firsttoken_probes_total{provider=~"$provider"}, model)') == (
        "firsttoken_probes_total"
    )


def resolve(names: set[str], scraped: set[str], rules: dict[str, str]) -> set[str]:
    """The names that are neither scraped nor a recording rule whose own inputs resolve."""
    missing = set()
    for name in names:
        if name in scraped or name in SYNTHETIC:
            continue
        if name in rules:
            missing |= resolve(metric_names(rules[name]), scraped, rules)
        else:
            missing.add(name)
    return missing


def test_every_panel_metric_exists_in_a_real_scrape(running, prometheus):
    dashboard = json.loads(DASHBOARD.read_text())
    scraped = scraped_names(running.scrape())
    rules = recording_rules()
    names = set().union(*(metric_names(e) for e in panel_exprs(dashboard)))
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            names.add(label_values_metric(var["query"]["query"]))
    assert not resolve(names, scraped, rules), sorted(resolve(names, scraped, rules))
    # Each of the panels' headline metrics is there (a parser that found nothing would pass above).
    assert {"firsttoken_probes_total", "firsttoken_sched_lag_seconds_bucket", "firsttoken_route_info", "up"} <= names
    assert {n for n in names if n in rules} >= {
        "provider_model_region:firsttoken_ttft_seconds:p99_5m",
        "provider_model_region:firsttoken_probes:availability_5m",
    }

    # The same queries, as Grafana would send them, run on Prometheus: they parse, and they return
    # data, the route panels included.
    def concrete(expr: str) -> str:
        expr = expr.replace("$__rate_interval", "1m")
        return re.sub(r"\$(provider|model|region)\b", ".*", expr)

    def answered() -> list[str]:
        empty = []
        for expr in panel_exprs(dashboard):
            if not prometheus.query(concrete(expr))["result"]:
                empty.append(expr)
        return empty

    assert wait_for(lambda: not answered(), 60), answered()


def test_provisioning_points_grafana_at_the_dashboard_and_prometheus():
    datasources = yaml.safe_load((ROOT / "deploy/grafana/provisioning/datasources/prometheus.yml").read_text())
    (ds,) = datasources["datasources"]
    dashboard = json.loads(DASHBOARD.read_text())
    assert ds["type"] == "prometheus" and ds["uid"] == dashboard["templating"]["list"][0]["current"]["value"]
    providers = yaml.safe_load((ROOT / "deploy/grafana/provisioning/dashboards/firsttoken.yml").read_text())
    path = providers["providers"][0]["options"]["path"]
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    grafana = compose["services"]["grafana"]
    assert grafana["profiles"] == ["observability"] and compose["services"]["prometheus"]["profiles"] == [
        "observability"
    ]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in grafana["volumes"]}
    assert mounts[path] == "./deploy/grafana/dashboards"
    assert (ROOT / mounts["/etc/grafana/provisioning"].removeprefix("./")).is_dir()
    prom = compose["services"]["prometheus"]
    prom_mounts = {v.split(":")[1]: v.split(":")[0] for v in prom["volumes"]}
    assert prom_mounts["/etc/prometheus/prometheus.yml"] == "./deploy/prometheus/prometheus.yml"
    assert prom_mounts["/etc/prometheus/rules"] == "./deploy/prometheus/rules"
    assert ds["url"].startswith("http://prometheus:9090")
