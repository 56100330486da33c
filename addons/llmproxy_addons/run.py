"""Running a session: the chain's doors put in front of the network — the lean door when the chain answers
without an upstream, else mitmproxy — each on a thread of its own. The wiring a session needs lives here, with
the adapters; the core only says what the chain is (`llmproxy.plan`)."""

import os
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from llmproxy.ca import CertificateAuthority, ensure_ca
from llmproxy.chain.stages.intercept import InterceptStage
from llmproxy.control.auth import Tokens
from llmproxy.control.router import Router
from llmproxy.control.server import ControlPlane, ControlServer
from llmproxy.destinations import Destination
from llmproxy.environment import (
    CONTROL_READ_ONLY_TOKEN_VARIABLE,
    CONTROL_TOKEN_VARIABLE,
    CONTROL_URL_VARIABLE,
    base_url_environment,
    proxy_environment,
)
from llmproxy.errors import LlmproxyError
from llmproxy.proxy_session import Listening, Session
from llmproxy_addons.egress import EgressGate
from llmproxy_addons.listener import Listener
from llmproxy_addons.stream_relay import StreamRelay

if TYPE_CHECKING:  # mitmproxy is imported once a session needs it: never for what the lean door serves alone
    from llmproxy_addons.base_url import BaseUrl
    from llmproxy_addons.proxy import ProxySettings, ProxyThread
    from llmproxy_addons.upstreams import Upstreams


def addons_for(
    session: Session,
    upstreams: "Upstreams",
    listening: Listening,
    base_url: "BaseUrl | None" = None,
    relay: StreamRelay | None = None,
) -> list[object]:
    """The router of llmproxy's base URL when it has one (before the proxy door: it says where a request goes);
    the proxy door; the relay door when something but the upstream may answer (a paced reply needs it, the mock's
    clients set by base URL use it); the WebSocket recorder beside the record tap; the gate on connections out
    when the network is not open to everything (what the user pointed llmproxy at is reached as configured).
    `relay`: one served already (on the lean door's loop), for the proxy door to use."""
    from llmproxy_addons.door import ProxyDoor
    from llmproxy_addons.websocket_recorder import WebSocketRecorder

    chain = session.chain
    addons: list[object] = []
    if relay is None and chain.answers:
        relay = _relay(session)
        addons.append(relay)
    if base_url is not None:
        addons.append(base_url)
    addons.append(ProxyDoor(chain, relay, upstreams))
    if session.record is not None:
        addons.append(WebSocketRecorder(session.record))
    if session.egress is None:
        session.egress = egress_gate(session, listening, upstreams.mapped.values(), relay)
    if session.egress is not None:
        addons.append(session.egress)
    return addons


def egress_gate(
    session: Session, listening: Listening, mapped: Iterable[Destination], relay: StreamRelay | None
) -> EgressGate | None:
    """The gate on connections out, when the network is not open to everything: what the user pointed llmproxy
    at (`--map`, `--reverse`, the upstream proxy) is reached as configured, the rest judged by the network's
    rules. Made before mitmproxy starts (the lean door starts it only for a connection it hands on)."""
    network = session.plan.network
    if network.everything:
        return None
    configured = [*mapped, *map(Destination.parse, listening.reverse)]
    if listening.upstream_proxy is not None:  # what goes through it was judged by its name already
        configured += listening.upstream_proxy.by_scheme.values()
    policy = network.egress.with_explicit([(d.host, d.port) for d in configured])
    chain = session.chain
    return EgressGate(policy, [relay] if relay is not None else [], lambda: chain.network.everything)


def lean(session: Session, listening: Listening) -> bool:
    """Whether the lean door serves the session (docs/architecture.md#one-chain-three-doors): the chain answers
    without an upstream (strict replay, the mock: no record mode, nothing the user pointed llmproxy at), and the
    network cannot open while it runs (the pytest plugin's can); or the session records (`forwards`). What it
    cannot serve itself it hands to mitmproxy, started then."""
    plan = session.plan
    if not listening.lean_door or listening.reverse:
        return False
    if forwards(session, listening):
        return True
    return not plan.network.everything and session.record is None and not listening.mapping


def forwards(session: Session, listening: Listening) -> bool:
    """Whether the lean door sends what the chain sends upstream itself (a session that records, going to the
    network directly or where `--map` says: not through an upstream proxy, which mitmproxy goes through)."""
    return session.record is not None and listening.upstream_proxy is None


@dataclass
class _Serving:
    """The doors a session runs, however they were started: where they listen, and how they stop."""

    url: str
    listeners: list[Listener]
    base_url: str  # llmproxy's own base URL ("" when none)
    reverse: list[Listener]  # reverse listeners (mitmproxy only)
    stops: list[Callable[[], None]] = field(default_factory=list)  # in order

    def stop(self) -> None:
        for stop in self.stops:
            stop()


@contextmanager
def run(session: Session, listening: Listening, start: bool = True) -> Iterator[Session]:
    """`session` served by a running proxy; stopped and the session closed on exit. `start`: tell the session
    its run has started once the proxy listens (else the caller does)."""
    try:
        ca = ensure_ca(listening.ca_directory)
        bundle = ca.write_bundle(ca.directory / "bundle.pem")
        serving = _lean(session, listening, ca) if lean(session, listening) else _mitmproxy(session, listening, ca)
    except BaseException:
        with suppress(LlmproxyError):  # the error that stopped the start is the one to report
            session.close()
        raise
    try:  # the doors answer from what is read meanwhile; a cassette that is wrong fails the start
        session.loaded()
    except BaseException:
        serving.stop()
        with suppress(LlmproxyError):
            session.close()
        raise
    control: ControlServer | None = None
    try:
        session.url = serving.url
        session.environment = proxy_environment(serving.url, ca.cert_path, bundle)
        session.ca_cert = ca.cert_path
        session.listeners = list(serving.listeners)
        session.base_url = serving.base_url
        listed = [listener.url for listener in serving.reverse]
        session.environment |= base_url_environment(session.base_url, listed, listening.base_url_env)
        control = _control(session, listening.control_port)
        if session.stopper is None:  # in-process: a stop ends this session where it stands, nothing else
            session.stopper = lambda: _stop(session, serving, control)
        if start:
            session.start()
        yield session
    finally:
        if control is not None:
            control.close()
        serving.stop()
        session.close()


def _relay(session: Session) -> StreamRelay:
    try:
        return StreamRelay(session.chain, session.plan.base_url_port)
    except OSError as error:
        raise LlmproxyError(f"cannot listen on 127.0.0.1:{session.plan.base_url_port}: {error.strerror}") from error


def _settings_for(
    session: Session,
    listening: Listening,
    ca: CertificateAuthority,
    host: str,
    port: int,
    reverse: tuple[str, ...] = (),
    base_url_port: int | None = None,
) -> "ProxySettings":
    from llmproxy_addons.proxy import ProxySettings

    return ProxySettings(
        confdir=ca.directory,
        listen_host=host,
        listen_port=port,
        reverse=reverse,
        upstream_ca=listening.upstream_ca,
        # offline: not even a TLS handshake upstream to learn a certificate
        options={"upstream_cert": False} if session.plan.offline else {},
        base_url_port=base_url_port,
    )


def _lean(session: Session, listening: Listening, ca: CertificateAuthority) -> _Serving:
    """The relay, the lean door and (record and replay) llmproxy's own base URL on a loop of their own; mitmproxy
    started only for a connection the lean door hands on — or at once when `--allow-host` may let a base-URL
    request out, which only mitmproxy's base URL can send on (it then serves the base URL)."""
    from llmproxy.leaf_certificates import LeafCertificates
    from llmproxy_addons.lean_door import BaseUrlServer, LeanDoor
    from llmproxy_addons.loop_thread import ServingThread
    from llmproxy_addons.upstream_client import UpstreamClient, trust

    relay = _relay(session)
    session.egress = egress_gate(session, listening, (), relay)
    certificates = LeafCertificates(ca)
    started: list[ProxyThread] = []
    lock = threading.Lock()
    base_url_port = None if session.plan.base_url else listening.base_url_port
    let_out = bool(session.plan.network.egress.entries) and base_url_port is not None
    mapped = {host.lower(): Destination.parse(url) for host, url in listening.mapping.items()}

    def mitmproxy() -> "ProxyThread":
        """mitmproxy on a loopback port of its own, started once, for the connections the lean door hands on."""
        from llmproxy_addons.base_url import BaseUrl
        from llmproxy_addons.proxy import ProxyThread
        from llmproxy_addons.upstreams import Upstreams

        with lock:
            if not started:
                upstreams = Upstreams(mapped, listening.upstream_proxy)
                router = BaseUrl() if let_out else None
                addons = addons_for(session, upstreams, listening, router, relay=relay)
                where = base_url_port if let_out else None
                proxy = ProxyThread(_settings_for(session, listening, ca, "127.0.0.1", 0, (), where), addons).start()
                if router is not None and proxy.base_url is not None:
                    router.spec, router.port = proxy.base_url.spec, urlsplit(proxy.base_url.url).port
                started.append(proxy)
            return started[0]

    def stop() -> None:
        with lock:
            for proxy in started:
                proxy.stop()
        thread.stop()  # the relay and the doors closed on their loop
        certificates.close()

    try:
        upstream = UpstreamClient(trust(listening.upstream_ca)) if forwards(session, listening) else None
        door = LeanDoor(
            session.chain,
            certificates,
            lambda: int(mitmproxy().url.rsplit(":", 1)[1]),
            listening.host,
            listening.port,
            upstream=upstream,
            mapped=mapped,
        )
        base_url = BaseUrlServer(door, base_url_port) if base_url_port is not None and not let_out else None
        door.base_url_port = base_url.port if base_url is not None else None
        thread = ServingThread([relay, door, *([base_url] if base_url is not None else [])]).start()
    except OSError as error:
        relay.close()
        certificates.close()
        reason = os.strerror(error.errno) if error.errno else str(error)  # asyncio's own text repeats the address
        raise LlmproxyError(
            f"the proxy could not start: cannot listen on {listening.host}:{listening.port}: {reason}"
        ) from error
    except BaseException:
        relay.close()
        certificates.close()
        raise
    if let_out:
        try:
            proxy = mitmproxy()
        except BaseException:
            stop()
            raise
        assert proxy.base_url is not None
        base = proxy.base_url.url
    else:
        base = f"http://127.0.0.1:{base_url.port if base_url is not None else relay.port}"
    return _Serving(door.url, [Listener("lean", door.url, None)], base, [], [stop])


def _mitmproxy(session: Session, listening: Listening, ca: CertificateAuthority) -> _Serving:
    from llmproxy_addons.base_url import BaseUrl
    from llmproxy_addons.proxy import ProxyThread
    from llmproxy_addons.upstreams import Upstreams

    # the mock answers clients set by base URL on its relay; record and replay on a listener of their own
    base_url_port = None if session.plan.base_url else listening.base_url_port
    settings = _settings_for(session, listening, ca, listening.host, listening.port, listening.reverse, base_url_port)
    mapped = {host.lower(): Destination.parse(url) for host, url in listening.mapping.items()}
    upstreams = Upstreams(mapped, listening.upstream_proxy)
    base_url = BaseUrl()
    addons = addons_for(session, upstreams, listening, base_url)
    try:
        proxy = ProxyThread(settings, addons).start()
    except BaseException:
        for addon in addons:
            if isinstance(addon, StreamRelay):
                addon.close()
        raise
    upstreams.reverse_prefixes = {
        listener.spec: urlsplit(listener.target).path.rstrip("/") for listener in proxy.listeners if listener.target
    }
    relay = next((addon for addon in addons if isinstance(addon, StreamRelay)), None)
    base = ""
    if proxy.base_url is not None:
        base_url.spec, base = proxy.base_url.spec, proxy.base_url.url
        base_url.port = urlsplit(proxy.base_url.url).port
    elif relay is not None and session.plan.base_url:
        base = f"http://127.0.0.1:{relay.port}"
    reverse = proxy.listeners[1:]
    base_url.reverse = {
        urlsplit(listener.url).port or 0: Destination.parse(listener.target, "--reverse")
        for listener in reverse
        if listener.target
    }
    return _Serving(proxy.url, list(proxy.listeners), base, reverse, [proxy.stop])


def _stop(session: Session, serving: _Serving, control: ControlServer | None) -> None:
    """End a session run in-process (the control API's stop) as leaving its block would: the control port
    closed, the proxy stopped, the session closed (its cassette finished, its summary set) — on a thread of its
    own, so that the caller's answer is not held up; the block that runs it then finds it ended."""

    def stop() -> None:
        if control is not None:
            control.close()
        serving.stop()
        session.close_now()

    threading.Thread(target=stop, name="llmproxy-stop", daemon=True).start()


def _control(session: Session, port: int = 0) -> ControlServer | None:
    """The runtime control API on 127.0.0.1 — the chaos endpoint and the REST API — its URL and fresh random
    tokens (one for everything, one that only reads) put in the environment the command gets (`llmproxy chaos …`
    reads them from there)."""
    stage = next((stage for stage in session.chain.stages if isinstance(stage, InterceptStage)), None)
    if stage is None or not session.plan.intercept.control:
        return None
    tokens = Tokens(secrets.token_urlsafe(24), secrets.token_urlsafe(24))
    telemetry = session.telemetry
    metrics = telemetry.registry.exposition if telemetry is not None and telemetry.plan.metrics else None

    def api() -> Router:
        from llmproxy.control.api import control_api

        return control_api(session)

    plane = ControlPlane(lambda: stage.engine, api, session.plan.intercept.fixed, metrics)
    try:
        control = ControlServer(plane, tokens, port)
    except OSError as error:
        raise LlmproxyError(f"cannot listen on 127.0.0.1:{port} for the control port: {error.strerror}") from error
    session.control_url = control.url
    session.control_api_url = control.api_url or ""
    session.ui_url = control.ui_url()
    session.environment[CONTROL_URL_VARIABLE] = control.url
    session.environment[CONTROL_TOKEN_VARIABLE] = tokens.full
    if tokens.read_only is not None:
        session.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE] = tokens.read_only
    return control
