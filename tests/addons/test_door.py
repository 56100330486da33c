"""The proxy door with mitmproxy's own addon test helpers (`taddons`, `tflow`): how each hook translates a flow
for the chain and applies what comes back — the response, the metadata, the streaming flag and the tap."""

from collections.abc import Awaitable, Iterator
from dataclasses import dataclass, field

import pytest
from mitmproxy import http
from mitmproxy.test import taddons, tflow, tutils

from llmproxy.chain import Chain, Context, CutStream, Incoming, Network, Reply, ReplySource, ResponseHead, Stage, Tap
from llmproxy.chain.reply import PLAIN_TEXT
from llmproxy.model.exchange import RawExchange
from llmproxy_addons.door import SOURCE, ProxyDoor
from llmproxy_addons.stream_relay import TOKEN_HEADER, StreamRelay
from llmproxy_addons.upstreams import Destination, Upstreams

SSE = http.Headers(content_type="text/event-stream")


class Answering(Stage):
    """Answers every request with `reply`; None passes them all on."""

    name = "mock"

    def __init__(self, reply: Reply | None) -> None:
        self.reply = reply
        self.seen: list[Incoming] = []

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        self.seen.append(incoming)
        return self.reply


@dataclass
class Watching:
    """An observer that notes what it sees; `cut_after` pieces, it cuts the stream."""

    cut_after: int | None = None
    pieces: list[bytes] = field(default_factory=list)
    ended: list[RawExchange] = field(default_factory=list)

    def chunk(self, data: bytes, at: float) -> bytes:
        if self.cut_after is not None and len(self.pieces) >= self.cut_after:
            raise CutStream
        self.pieces.append(data)
        return data.upper()

    async def end(self, exchange: RawExchange) -> None:
        self.ended.append(exchange)


class Watch(Tap):
    name = "meter"

    def __init__(self, observer: Watching) -> None:
        self.observer = observer
        self.heads: list[ResponseHead | None] = []

    def open(self, incoming: Incoming, head: ResponseHead | None) -> Watching:
        self.heads.append(head)
        return self.observer


@pytest.fixture
def tctx() -> Iterator[taddons.context]:
    with taddons.context() as context:
        yield context


def run(tctx: taddons.context, door: ProxyDoor, flow: http.HTTPFlow) -> None:
    tctx.master.event_loop.run_until_complete(tctx.cycle(door, flow))


def done(tctx: taddons.context, hook: Awaitable[None] | None) -> None:
    """A hook's result, awaited as mitmproxy awaits it."""
    if hook is not None:
        tctx.master.event_loop.run_until_complete(hook)


def test_a_reply_becomes_the_response_and_the_flow_says_who_answered(tctx: taddons.context) -> None:
    reply = Reply(418, (("content-type", "application/json"), ("x-kind", "teapot")), b'{"ok":1}', reason="Brewing")
    stage = Answering(reply)
    door = ProxyDoor(Chain([stage], network=Network()))
    flow = tflow.tflow()
    run(tctx, door, flow)
    assert flow.response is not None
    assert (flow.response.status_code, flow.response.reason, flow.response.content) == (418, "Brewing", b'{"ok":1}')
    assert flow.response.headers["x-kind"] == "teapot"
    assert flow.response.headers["content-length"] == "8"
    assert flow.metadata[SOURCE] == "mock"
    assert flow.response.stream is True  # answered here: nothing holds it back
    (incoming,) = stage.seen
    assert (incoming.raw.method, incoming.raw.host, incoming.raw.path) == ("GET", "address", "/path")


def test_a_shared_reply_is_built_once_and_each_flow_gets_its_own_copy(
    tctx: taddons.context, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[http.Response] = []
    make = http.Response.make

    def counted(*args: object, **kwargs: object) -> http.Response:
        built.append(make(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(http.Response, "make", counted)
    reply = Reply(200, (PLAIN_TEXT,), b"recorded", source=ReplySource.CASSETTE, shared=True)
    door = ProxyDoor(Chain([Answering(reply)], network=Network()))
    first, second = tflow.tflow(), tflow.tflow()
    run(tctx, door, first)
    run(tctx, door, second)
    (template,) = built
    assert first.response is not second.response
    assert first.response is not template
    assert first.response is not None
    assert second.response is not None
    first.response.headers["x-changed"] = "1"
    assert "x-changed" not in second.response.headers
    assert second.response.content == b"recorded"
    assert second.metadata[SOURCE] == "cassette"


def test_a_paced_reply_goes_through_the_relay_which_streams_it(tctx: taddons.context) -> None:
    reply = Reply(200, (("content-type", "text/event-stream"),), events=((0.0, b"a\n\n"), (0.5, b"b\n\n")))
    chain = Chain([Answering(reply)], network=Network())
    relay = StreamRelay(chain)
    door = ProxyDoor(chain, relay)
    flow = tflow.tflow()
    run(tctx, door, flow)
    assert flow.response is None  # fetched from the relay, through the proxy
    assert (flow.request.scheme, flow.request.host, flow.request.port) == ("http", "127.0.0.1", relay.port)
    token = flow.request.headers[TOKEN_HEADER]
    assert relay.answer("GET", "/path", {TOKEN_HEADER: token}, b"") is reply
    assert relay.answer("GET", "/path", {TOKEN_HEADER: token}, b"") is None  # served once
    flow.response = tutils.tresp(headers=SSE)
    door.responseheaders(flow)
    assert flow.response.stream is True  # the timed chunks pass as they come
    relay.close()


def test_what_nothing_answers_goes_upstream_mapped_and_its_stream_is_tapped_unbuffered(
    tctx: taddons.context,
) -> None:
    watching = Watching()
    tap = Watch(watching)
    upstreams = Upstreams({"address": Destination.parse("http://127.0.0.1:9999/base")})
    door = ProxyDoor(Chain([Answering(None)], [tap]), upstreams=upstreams)
    flow = tflow.tflow()
    run(tctx, door, flow)
    assert flow.response is None
    assert flow.metadata[SOURCE] == "upstream"
    assert (flow.request.host, flow.request.port, flow.request.path) == ("127.0.0.1", 9999, "/base/path")
    flow.response = tutils.tresp(headers=SSE, content=None)
    door.responseheaders(flow)
    (head,) = tap.heads
    assert head is not None
    assert head.streamed
    assert head.status == 200
    assert callable(flow.response.stream)
    assert flow.response.stream(b"data: x\n\n") == b"DATA: X\n\n"
    assert flow.response.stream(b"") == []  # nothing to send (an empty piece would end a chunked body)
    done(tctx, door.response(flow))
    (exchange,) = watching.ended
    assert exchange.request.host == "address"
    assert exchange.request.path == "/path"
    assert exchange.response is not None
    assert exchange.response.status == 200
    assert watching.pieces == [b"data: x\n\n", b""]


def test_a_plain_upstream_body_is_buffered_and_seen_whole(tctx: taddons.context) -> None:
    watching = Watching()
    door = ProxyDoor(Chain(taps=[Watch(watching)]))
    flow = tflow.tflow()
    run(tctx, door, flow)
    flow.response = tutils.tresp(content=b'{"whole":true}')
    door.responseheaders(flow)
    assert flow.response.stream is False
    done(tctx, door.response(flow))
    (exchange,) = watching.ended
    assert exchange.response is not None
    assert exchange.response.body == b'{"whole":true}'
    assert watching.pieces == []


def test_without_a_watching_tap_the_upstream_answer_passes_as_it_comes(tctx: taddons.context) -> None:
    door = ProxyDoor(Chain())
    flow = tflow.tflow()
    run(tctx, door, flow)
    flow.response = tutils.tresp()
    door.responseheaders(flow)
    assert flow.response.stream is True


def test_an_upstream_that_fails_before_answering_is_still_seen_with_its_error(tctx: taddons.context) -> None:
    watching = Watching()
    tap = Watch(watching)
    door = ProxyDoor(Chain(taps=[tap]))
    flow = tflow.tflow()
    run(tctx, door, flow)
    flow.error = tflow.terr("Connect call failed")
    done(tctx, door.error(flow))
    assert tap.heads == [None]
    (exchange,) = watching.ended
    assert (exchange.response, exchange.error) == (None, "Connect call failed")


def test_a_tap_that_cuts_a_stream_ends_what_the_client_gets(tctx: taddons.context) -> None:
    door = ProxyDoor(Chain(taps=[Watch(Watching(cut_after=1))]))
    flow = tflow.tflow()
    run(tctx, door, flow)
    flow.response = tutils.tresp(headers=SSE, content=None)
    door.responseheaders(flow)
    assert callable(flow.response.stream)
    assert [flow.response.stream(piece) for piece in (b"one\n\n", b"two\n\n", b"three\n\n")] == [b"ONE\n\n", [], []]


def test_a_flow_another_addon_answered_is_left_alone(tctx: taddons.context) -> None:
    stage = Answering(Reply(200, (), b"mine"))
    door = ProxyDoor(Chain([stage], network=Network()))
    flow = tflow.tflow(resp=True)
    run(tctx, door, flow)
    assert stage.seen == []
    assert SOURCE not in flow.metadata
