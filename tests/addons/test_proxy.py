"""The in-process proxy: TLS interception with llmproxy's CA, upstream mapping, reverse listeners, clean stop."""

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from llmproxy.ca import CertificateAuthority, ensure_ca
from llmproxy.destinations import parse_map
from llmproxy.errors import LlmproxyError
from llmproxy_addons import proxy as proxy_module
from llmproxy_addons.proxy import ProxySettings, ProxyThread
from llmproxy_addons.upstreams import Destination, Upstreams
from tests.certs import UpstreamCA, make_test_ca
from tests.conformance.server import LoopbackServer, Reply


@pytest.fixture
def ca(tmp_path: Path) -> CertificateAuthority:
    return ensure_ca(tmp_path / "llmproxy")


@pytest.fixture
def upstream_ca(tmp_path: Path) -> UpstreamCA:
    return make_test_ca(tmp_path, ("api.anthropic.com", "localhost"))


@pytest.fixture
def https_upstream(upstream_ca: UpstreamCA) -> Iterator[LoopbackServer]:
    with LoopbackServer(tls=upstream_ca.server_context) as server:
        yield server


def client(ca: CertificateAuthority, proxy: ProxyThread) -> httpx.Client:
    return httpx.Client(proxy=proxy.url, verify=ssl.create_default_context(cafile=str(ca.cert_path)))


def test_https_is_intercepted_with_llmproxys_ca_and_mapped_to_a_verified_upstream(
    ca: CertificateAuthority, upstream_ca: UpstreamCA, https_upstream: LoopbackServer
) -> None:
    https_upstream.queue(Reply(200, {"content-type": "application/json"}, b'{"ok":true}'))
    upstreams = Upstreams({"api.anthropic.com": Destination.parse(https_upstream.url)})
    settings = ProxySettings(confdir=ca.directory, upstream_ca=upstream_ca.cert_path)
    with ProxyThread(settings, [upstreams]) as proxy, client(ca, proxy) as http:
        response = http.post("https://api.anthropic.com/v1/messages?beta=true", json={"model": "m"})
    assert (response.status_code, response.json()) == (200, {"ok": True})
    (received,) = https_upstream.received
    assert (received.path, received.body) == ("/v1/messages?beta=true", b'{"model":"m"}')


def test_the_ca_is_loaded_once_per_start(
    ca: CertificateAuthority, upstream_ca: UpstreamCA, https_upstream: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each load checks the CA's RSA key again (0.1-0.2 s); the proxy still intercepts with it."""
    from mitmproxy import certs

    loads: list[Path] = []
    load = certs.CertStore.from_files.__func__  # type: ignore[attr-defined]

    def counted(cls: type[certs.CertStore], ca_file: Path, *rest: object) -> certs.CertStore:
        loads.append(ca_file)
        return load(cls, ca_file, *rest)  # type: ignore[no-any-return]

    monkeypatch.setattr(certs.CertStore, "from_files", classmethod(counted))
    https_upstream.queue(Reply(200, {"content-type": "application/json"}, b"{}"))
    upstreams = Upstreams({"api.anthropic.com": Destination.parse(https_upstream.url)})
    settings = ProxySettings(confdir=ca.directory, upstream_ca=upstream_ca.cert_path)
    with ProxyThread(settings, [upstreams]) as proxy, client(ca, proxy) as http:
        assert http.post("https://api.anthropic.com/v1/messages", json={}).status_code == 200
    assert loads == [ca.key_path]


def test_upstream_verification_stays_on_without_the_upstream_ca(
    ca: CertificateAuthority, https_upstream: LoopbackServer
) -> None:
    upstreams = Upstreams({"api.anthropic.com": Destination.parse(https_upstream.url)})
    with ProxyThread(ProxySettings(confdir=ca.directory), [upstreams]) as proxy, client(ca, proxy) as http:
        response = http.post("https://api.anthropic.com/v1/messages", json={})
    assert response.status_code == 502
    assert "certificate verify failed" in response.text.lower()
    assert https_upstream.received == []


def test_reverse_listener_serves_a_base_url_with_the_targets_path(
    ca: CertificateAuthority, loopback: LoopbackServer
) -> None:
    loopback.queue(Reply(200, {"content-type": "application/json"}, b"{}"))
    settings = ProxySettings(confdir=ca.directory, reverse=(f"{loopback.url}/v1",))
    upstreams = Upstreams({})
    with ProxyThread(settings, [upstreams]) as proxy:
        (reverse,) = proxy.listeners[1:]
        upstreams.reverse_prefixes = {reverse.spec: "/v1"}
        response = httpx.post(f"{reverse.url}/chat/completions", json={})
    assert response.status_code == 200
    assert loopback.received[0].path == "/v1/chat/completions"
    assert reverse.target == f"{loopback.url}/v1"


def test_a_port_taken_between_choosing_it_and_listening_is_chosen_again(
    ca: CertificateAuthority, busy_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listener whose port llmproxy chose itself (a reverse target's, the base URL's) is chosen afresh when
    another process took the port in the moment between: the run starts all the same."""
    chosen = iter([busy_port])
    real = proxy_module.free_port
    monkeypatch.setattr(proxy_module, "free_port", lambda host="127.0.0.1": next(chosen, None) or real(host))
    settings = ProxySettings(confdir=ca.directory, reverse=("http://127.0.0.1:9/v1",), base_url_port=0)
    with ProxyThread(settings, []) as proxy:
        (reverse,) = proxy.listeners[1:]
        assert proxy.base_url is not None
        ports = {int(listener.url.rsplit(":", 1)[1]) for listener in (reverse, proxy.base_url)}
    assert busy_port not in ports
    assert len(ports) == 2


def test_stop_closes_the_listeners(ca: CertificateAuthority) -> None:
    with ProxyThread(ProxySettings(confdir=ca.directory), []) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_a_port_in_use_is_a_clear_error(ca: CertificateAuthority, busy_port: int) -> None:
    settings = ProxySettings(confdir=ca.directory, listen_port=busy_port)
    with pytest.raises(LlmproxyError) as refused:
        ProxyThread(settings, []).start()
    assert (
        str(refused.value)
        == f"the proxy could not start: cannot listen on 127.0.0.1:{busy_port}: Address already in use"
    )


@pytest.mark.parametrize("url", ["ftp://x", "http://", "x"])
def test_bad_map_urls_are_refused(url: str) -> None:
    with pytest.raises(LlmproxyError, match="expected an http"):
        Destination.parse(url)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:", "http://127.0.0.1:/v1", "https://[::1]:", "http://127.0.0.1:notaport", "http://h:0"]
)
@pytest.mark.parametrize("option", ["--map", "--reverse"])
def test_a_url_without_a_valid_port_is_refused(url: str, option: str) -> None:
    """`http://127.0.0.1:` (a port variable left unset) is no port at all, not the scheme's default."""
    with pytest.raises(LlmproxyError, match=f"^{option}: .* has no valid port"):
        Destination.parse(url, option)


@pytest.mark.parametrize("entry", ["api.anthropic.com", "=http://x", "h="])
def test_bad_map_entries_are_refused(entry: str) -> None:
    with pytest.raises(LlmproxyError, match="--map expects HOST=URL"):
        parse_map((entry,))
