"""Running a session: the chain's doors put in front of mitmproxy, on the proxy's own thread. The wiring a
session needs lives here, with the adapters; the core only says what the chain is (`llmproxy.plan`)."""

import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from urllib.parse import urlsplit

from llmproxy.ca import ensure_ca
from llmproxy.chain.stages.intercept import InterceptStage
from llmproxy.chain.taps.meter import MeterTap
from llmproxy.control.api import control_api
from llmproxy.control.auth import Tokens
from llmproxy.control.server import ControlPlane, ControlServer
from llmproxy.environment import (
    CONTROL_READ_ONLY_TOKEN_VARIABLE,
    CONTROL_TOKEN_VARIABLE,
    CONTROL_URL_VARIABLE,
    base_url_environment,
    proxy_environment,
)
from llmproxy.errors import LlmproxyError
from llmproxy.proxy_session import Listening, Session
from llmproxy_addons.base_url import BaseUrl
from llmproxy_addons.door import ProxyDoor
from llmproxy_addons.egress import EgressGate
from llmproxy_addons.proxy import ProxySettings, ProxyThread
from llmproxy_addons.stream_relay import StreamRelay
from llmproxy_addons.upstreams import Destination, Upstreams
from llmproxy_addons.websocket_recorder import WebSocketRecorder


def addons_for(
    session: Session, upstreams: Upstreams, listening: Listening, base_url: BaseUrl | None = None
) -> list[object]:
    """The router of llmproxy's base URL when it has one (before the proxy door: it says where a request goes);
    the proxy door; the relay door when something but the upstream may answer (a paced reply needs it, the mock's
    clients set by base URL use it); the WebSocket recorder beside the record tap; the gate on connections out
    when the network is not open to everything (what the user pointed llmproxy at is reached as configured)."""
    chain = session.chain
    relay = None
    if chain.answers:
        try:
            relay = StreamRelay(chain, session.plan.base_url_port)
        except OSError as error:
            raise LlmproxyError(f"cannot listen on 127.0.0.1:{session.plan.base_url_port}: {error.strerror}") from error
    addons: list[object] = [] if relay is None else [relay]
    if base_url is not None:
        addons.append(base_url)
    addons.append(ProxyDoor(chain, relay, upstreams))
    if session.record is not None:
        addons.append(WebSocketRecorder(session.record))
    network = session.plan.network
    if not network.everything:
        configured = [*upstreams.mapped.values(), *map(Destination.parse, listening.reverse)]
        if listening.upstream_proxy is not None:  # what goes through it was judged by its name already
            configured += listening.upstream_proxy.by_scheme.values()
        policy = network.egress.with_explicit([(d.host, d.port) for d in configured])
        session.egress = EgressGate(policy, [relay] if relay is not None else [], lambda: chain.network.everything)
        addons.append(session.egress)
    return addons


@contextmanager
def run(session: Session, listening: Listening, start: bool = True) -> Iterator[Session]:
    """`session` served by a running proxy; stopped and the session closed on exit. `start`: tell the session
    its run has started once the proxy listens (else the caller does)."""
    try:
        ca = ensure_ca(listening.ca_directory)
        bundle = ca.write_bundle(ca.directory / "bundle.pem")
        settings = ProxySettings(
            confdir=ca.directory,
            listen_host=listening.host,
            listen_port=listening.port,
            reverse=listening.reverse,
            upstream_ca=listening.upstream_ca,
            # offline: not even a TLS handshake upstream to learn a certificate
            options={"upstream_cert": False} if session.plan.offline else {},
            # the mock answers clients set by base URL on its relay; record and replay on a listener of their own
            base_url_port=None if session.plan.base_url else listening.base_url_port,
        )
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
    except BaseException:
        with suppress(LlmproxyError):  # the error that stopped the start is the one to report
            session.close()
        raise
    control: ControlServer | None = None
    try:
        upstreams.reverse_prefixes = {
            listener.spec: urlsplit(listener.target).path.rstrip("/") for listener in proxy.listeners if listener.target
        }
        session.url = proxy.url
        session.environment = proxy_environment(proxy.url, ca.cert_path, bundle)
        session.ca_cert = ca.cert_path
        session.listeners = list(proxy.listeners)
        relay = next((addon for addon in addons if isinstance(addon, StreamRelay)), None)
        if proxy.base_url is not None:
            base_url.spec, session.base_url = proxy.base_url.spec, proxy.base_url.url
            base_url.port = urlsplit(proxy.base_url.url).port
        elif relay is not None and session.plan.base_url:
            session.base_url = f"http://127.0.0.1:{relay.port}"
        reverse = proxy.listeners[1:]
        base_url.reverse = {
            urlsplit(listener.url).port or 0: Destination.parse(listener.target, "--reverse")
            for listener in reverse
            if listener.target
        }
        listed = [listener.url for listener in reverse]
        session.environment |= base_url_environment(session.base_url, listed, listening.base_url_env)
        control = _control(session, listening.control_port)
        if session.stopper is None:  # in-process: a stop ends this session where it stands, nothing else
            session.stopper = lambda: _stop(session, proxy, control)
        if start:
            session.start()
        yield session
    finally:
        if control is not None:
            control.close()
        proxy.stop()
        session.close()


def _stop(session: Session, proxy: ProxyThread, control: ControlServer | None) -> None:
    """End a session run in-process (the control API's stop) as leaving its block would: the control port
    closed, the proxy stopped, the session closed (its cassette finished, its summary set) — on a thread of its
    own, so that the caller's answer is not held up; the block that runs it then finds it ended."""

    def stop() -> None:
        if control is not None:
            control.close()
        proxy.stop()
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
    meter = next((tap for tap in session.chain.taps if isinstance(tap, MeterTap)), None)
    telemetry = meter.telemetry if meter is not None else None
    registry = telemetry.registry if telemetry is not None else None
    metrics = registry.exposition if registry is not None else None
    plane = ControlPlane(lambda: stage.engine, control_api(session), session.plan.intercept.fixed, metrics)
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
