"""The response side as the Intercept and meter work will use it: a tap that rewrites a synthetic reply (cut,
corrupt, delay its events) does so on both doors, and a tap that cuts a live upstream stream drops the
client's connection there, with the exchange's end reported to every tap."""

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from llmproxy.ca import ensure_ca
from llmproxy.cassette.redact import Redactor
from llmproxy.chain import Chain, CutStream, Incoming, Network, Reply, ResponseHead, Tap
from llmproxy.chain.stages.mock import MockStage
from llmproxy.mock.engine import MockEngine
from llmproxy.mock.load import load_expectations
from llmproxy.mock.log import MockLog
from llmproxy.model.exchange import RawExchange
from llmproxy_addons.door import ProxyDoor
from llmproxy_addons.proxy import ProxySettings, ProxyThread
from llmproxy_addons.stream_relay import StreamRelay
from tests.conformance.server import LoopbackServer
from tests.conformance.server import Reply as Upstream

STREAM = {
    "model": "claude-haiku-4-5",
    "max_tokens": 64,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}


class Truncate(Tap):
    """Keeps the first `keep` events of a synthetic stream, the last of them corrupted, each 50 ms later."""

    name = "intercept"

    def __init__(self, keep: int) -> None:
        self.keep = keep

    def reply(self, incoming: Incoming, reply: Reply) -> Reply:
        if reply.events is None:
            return reply
        kept = [(at + 0.05, data) for at, data in reply.events[: self.keep]]
        at, last = kept[-1]
        kept[-1] = (at, last.replace(b"data: {", b"data: {{"))
        return reply._replace(events=tuple(kept))


@pytest.fixture(scope="module")
def doors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A mock whose streams are paced (so they are events), with the truncating tap, on both doors."""
    directory = tmp_path_factory.mktemp("taps")
    path = directory / "expectations.json"
    respond = {"text": "one two three four five six seven eight", "physics": {"tokensPerSecond": 1000}}
    path.write_text(json.dumps({"expectations": [{"respond": respond}]}))
    stage = MockStage(MockEngine(load_expectations(path)), MockLog(Redactor()))
    chain = Chain([stage], [Truncate(keep=3)], Network())
    relay = StreamRelay(chain)
    ca = ensure_ca(directory / "ca")
    with ProxyThread(ProxySettings(confdir=ca.directory), [relay, ProxyDoor(chain, relay)]) as proxy:
        yield proxy.url, f"http://127.0.0.1:{relay.port}"


def stream(client: httpx.Client, base: str) -> tuple[list[bytes], float]:
    started = time.monotonic()
    headers = {"host": "api.anthropic.com", "anthropic-version": "2023-06-01"}
    with client.stream("POST", f"{base}/v1/messages", json=STREAM, headers=headers) as response:
        body = response.read()
    return body.split(b"\n\n")[:-1], time.monotonic() - started


def test_a_tap_rewrites_a_synthetic_stream_the_same_on_both_doors(doors: tuple[str, str]) -> None:
    proxy, base = doors
    with httpx.Client(proxy=proxy, timeout=10) as proxied, httpx.Client(timeout=10) as direct:
        through_proxy, _ = stream(proxied, base)
        on_relay, took = stream(direct, base)
    assert through_proxy == on_relay
    assert len(on_relay) == 3
    assert on_relay[0].startswith(b"event: message_start\ndata: {")
    assert b"data: {{" in on_relay[-1]  # corrupted
    assert took >= 0.05  # delayed


class Cut(Tap):
    """Cuts every live stream after two pieces; notes how each exchange ended."""

    name = "intercept"

    def __init__(self) -> None:
        self.ended: list[RawExchange] = []

    def open(self, incoming: Incoming, head: ResponseHead | None) -> "Cutting":
        return Cutting(self.ended)


class Cutting:
    def __init__(self, ended: list[RawExchange]) -> None:
        self.ended = ended
        self.pieces = 0

    def chunk(self, data: bytes, at: float) -> bytes:
        self.pieces += 1
        if self.pieces > 2:
            raise CutStream
        return data

    async def end(self, exchange: RawExchange) -> None:
        self.ended.append(exchange)


def test_a_tap_that_cuts_a_live_stream_drops_the_client_there(tmp_path: Path) -> None:
    events = [b"data: %d\n\n" % i for i in range(6)]
    tap = Cut()
    ca = ensure_ca(tmp_path / "ca")
    with (
        LoopbackServer() as upstream,
        ProxyThread(ProxySettings(confdir=ca.directory), [ProxyDoor(Chain(taps=[tap]))]) as proxy,
    ):
        upstream.queue(Upstream(200, {"content-type": "text/event-stream"}, events=events, interval=1.0))
        started = time.monotonic()
        received = b""
        with httpx.Client(proxy=proxy.url, timeout=10) as client:
            try:
                with client.stream("GET", f"{upstream.url}/stream") as response:
                    for piece in response.iter_raw():
                        received += piece
            except httpx.RemoteProtocolError:
                pass  # a client may also call the cut what it is: an incomplete body
        took = time.monotonic() - started
    assert received == b"".join(events[:2])
    assert took < 4  # cut at the second event (1 s); the upstream's last would come at 5 s, whatever the load
    (exchange,) = tap.ended
    assert exchange.error == "Client disconnected."
