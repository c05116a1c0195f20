"""Which egress proxy a probe takes (pure): the provider's `proxy:`, else *_PROXY and NO_PROXY as curl reads them."""

from __future__ import annotations

import pytest

from monitor.probe.transport.proxy import Proxy, environment_proxies, parse_proxy, proxy_for, proxy_passwords

ENV = environment_proxies(
    {
        "HTTPS_PROXY": "http://egress:3128",
        "http_proxy": "http://plain:8080",
        "NO_PROXY": ".internal,10.0.0.5,localhost:9000",
    }
)


@pytest.mark.parametrize(
    ("url", "proxy"),
    [
        ("https://api.openai.com/v1", "http://egress:3128"),
        ("http://ollama.lan:11434/api", "http://plain:8080"),
        ("https://llm.corp.internal/v1", None),  # a NO_PROXY domain suffix
        ("https://internal/v1", None),  # the suffix names the domain itself too
        ("http://10.0.0.5/v1", None),
        ("http://localhost:9000/v1", None),  # host:port entry
        ("http://localhost:9001/v1", "http://plain:8080"),
    ],
)
def test_the_environment_decides_when_the_provider_says_nothing(url, proxy):
    got = proxy_for(url, None, ENV)
    assert (got.url if got else None) == proxy


def test_lowercase_wins_and_all_proxy_is_the_fallback():
    env = environment_proxies(
        {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:2", "ALL_PROXY": "http://all:3"}
    )
    assert proxy_for("https://x.example/v1", None, env).url == "http://lower:2"
    assert proxy_for("http://x.example/v1", None, env).url == "http://all:3"
    assert proxy_for("https://x.example/v1", None, environment_proxies({"NO_PROXY": "*", **env})) is None


def test_the_provider_setting_wins_over_the_environment():
    assert proxy_for("https://api.example/v1", "direct", ENV) is None
    assert proxy_for("https://llm.corp.internal/v1", "http://mine:3128", ENV).url == "http://mine:3128"


def test_credentials_are_kept_apart_from_the_label():
    proxy = parse_proxy("http://svc%40corp:p%3Ass@proxy.corp:3128")
    assert proxy == Proxy("http://proxy.corp:3128", "svc@corp", "p:ss")
    assert "p:ss" not in proxy.label and "svc" not in proxy.label
    assert proxy_for("https://a.example", None, {"https": "proxy.corp:3128"}).url == "http://proxy.corp:3128"


def test_a_proxy_that_is_not_http_is_refused():
    with pytest.raises(ValueError, match="http://"):
        parse_proxy("socks5://proxy:1080")


def test_the_environments_proxy_passwords_are_secrets():
    env = {"HTTPS_PROXY": "http://svc:Env-S3cret-99@egress:3128", "http_proxy": "plain:8080", "NO_PROXY": "a:b@c"}
    assert proxy_passwords(env) == {"Env-S3cret-99"}
