"""A notifier is one module: dropped into the notifiers package, it loads from YAML, keeps its secrets
out of reprs and messages, shows in the JSON Schema, and sends, with no other file edited."""

from __future__ import annotations

import sys
import textwrap

import pytest

import monitor.alerts.notifiers as notifiers
from monitor.alerts.notifiers import build_notifier
from monitor.config.editor import json_schema
from monitor.config.notifiers import notifier_types
from tests.alerts.receiver import Receiver
from tests.config_helpers import errors, load, minimal

PLUGIN = '''
    """`echo`: POSTs the alert's summary and a bearer token (a throwaway notifier for a test)."""

    from dataclasses import field
    from typing import ClassVar

    import httpx

    from monitor.config.fields import SecretText, Url, spec
    from monitor.config.notifiers import NotifierConfig


    @spec(kw_only=True)
    class EchoConfig(NotifierConfig):
        type: ClassVar[str] = "echo"
        url: Url
        token: SecretText = field(repr=False)


    class EchoNotifier:
        def __init__(self, config):
            self.name, self.config = config.name, config

        def send(self, body, *, event, delivery_id):
            headers = {"Authorization": f"Bearer {self.config.token}"}
            httpx.post(self.config.url, json={"summary": body["summary"], "event": event}, headers=headers)

        def close(self):
            pass


    def create(config, secrets=()):
        return EchoNotifier(config)
'''


@pytest.fixture
def echo_plugin(tmp_path):
    """The package scans its own path; a test extends that path instead of writing into the repository."""
    (tmp_path / "echo_notifier.py").write_text(textwrap.dedent(PLUGIN))
    notifiers.__path__.append(str(tmp_path))
    yield
    notifiers.__path__.remove(str(tmp_path))
    sys.modules.pop("monitor.alerts.notifiers.echo_notifier", None)
    notifier_types("refresh")  # an unknown name rescans: the echo type is gone again


def test_a_dropped_in_notifier_loads_sends_and_keeps_its_secret(echo_plugin):
    with Receiver() as rx:
        spec = {"name": "e", "type": "echo", "url": rx.url + "/hook", "token": "${ECHO_TOKEN}", "severities": ["page"]}
        config = load(minimal(notifiers=[spec]), env={"ECHO_TOKEN": "echo-token-123456"})
        (echo,) = config.notifiers
        assert type(echo).__name__ == "EchoConfig" and echo.wants("page")
        assert "echo-token-123456" in config.secrets and "echo-token-123456" not in repr(config)
        build_notifier(echo, config.secrets).send({"summary": "ttft up"}, event="firing", delivery_id="1")
    (req,) = rx.requests
    assert req.json() == {"summary": "ttft up", "event": "firing"}
    assert req.headers["authorization"] == "Bearer echo-token-123456"

    bad = {"name": "e", "type": "echo", "url": "nope", "tokn": "x"}
    assert errors(minimal(notifiers=[bad])) == [
        "notifiers[0].tokn: unknown key (did you mean 'token'?)",
        "notifiers[0].url: not a URL (expected http://host/... or https://host/...), got 'nope'",
        "notifiers[0].token: required",
    ]
    items = json_schema()["properties"]["notifiers"]["items"]
    assert any(item["$ref"].endswith("/EchoConfig") for item in items["anyOf"])
    assert "echo" in items["properties"]["type"]["enum"]  # an editor offers the new type


def test_without_the_module_the_type_is_unknown():
    line = errors(minimal(notifiers=[{"name": "e", "type": "echo"}]))[0]
    assert line.startswith("notifiers[0].type: unknown notifier type 'echo'; expected one of alertmanager, apprise")
