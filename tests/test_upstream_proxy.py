"""The proxy the environment names, which llmproxy's own proxy goes on through (the pytest plugin's, under
`llmproxy record -- pytest` or behind a corporate proxy): read as clients read HTTPS_PROXY, HTTP_PROXY and
NO_PROXY, this machine's own addresses always reached directly, credentials never shown."""

import pytest

from llmproxy.destinations import Destination
from llmproxy.errors import UsageError
from llmproxy.upstream_proxy import UpstreamProxy


def test_none_without_proxy_variables() -> None:
    assert UpstreamProxy.from_environment({"PATH": "/bin", "NO_PROXY": "*"}) is None


def test_each_scheme_goes_through_its_own_variable_lower_case_first() -> None:
    proxy = UpstreamProxy.from_environment(
        {"HTTPS_PROXY": "http://upper:1", "https_proxy": "http://127.0.0.1:40531", "HTTP_PROXY": "proxy.corp:3128"}
    )
    assert proxy is not None
    assert proxy.via("https", "api.openai.com") == Destination("http", "127.0.0.1", 40531, "")
    assert proxy.via("http", "llm.corp.example") == Destination("http", "proxy.corp", 3128, "")  # http:// implied
    assert UpstreamProxy.from_environment({"HTTP_PROXY": "http://p:1"}).via("https", "x.example") is None  # type: ignore[union-attr]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.9.9.9"])
def test_this_machine_is_reached_directly(host: str) -> None:
    proxy = UpstreamProxy.from_environment(
        {"HTTPS_PROXY": "http://127.0.0.1:3128", "HTTP_PROXY": "http://127.0.0.1:3128"}
    )
    assert proxy is not None
    assert proxy.via("http", host) is None
    assert proxy.via("https", host) is None


def test_no_proxy_names_hosts_reached_directly() -> None:
    proxy = UpstreamProxy.from_environment({"HTTPS_PROXY": "http://proxy:3128", "no_proxy": "internal.example, .svc"})
    assert proxy is not None
    assert proxy.via("https", "internal.example") is None
    assert proxy.via("https", "api.internal.example") is None
    assert proxy.via("https", "db.svc") is None
    assert proxy.via("https", "api.openai.com") is not None
    everything = UpstreamProxy.from_environment({"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "*"})
    assert everything is not None
    assert everything.via("https", "api.openai.com") is None


def test_credentials_become_the_connect_requests_authorization_and_are_never_shown() -> None:
    proxy = UpstreamProxy.from_environment({"HTTPS_PROXY": "http://me%40corp:p%20ss@proxy.corp:3128"})
    assert proxy is not None
    assert proxy.authorization == "Basic bWVAY29ycDpwIHNz"  # me@corp:p ss
    assert str(proxy) == "http://proxy.corp:3128"
    assert "p%20ss" not in repr(proxy)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("socks5://me:secret@proxy:1080", "HTTPS_PROXY=socks5://proxy:1080: llmproxy goes on through an http:// or"),
        ("http://me:secret@proxy:99999", "HTTPS_PROXY=http://proxy:99999: no valid port"),
    ],
)
def test_a_proxy_it_cannot_use_is_a_usage_error_without_its_credentials(value: str, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        UpstreamProxy.from_environment({"HTTPS_PROXY": value})
    assert str(raised.value).startswith(message)
    assert "secret" not in str(raised.value)
