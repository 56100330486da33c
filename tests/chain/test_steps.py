"""The chain's values and its steps' lifecycle, with plain objects: a reply and what a request says cannot be
changed once made; every step is closed though one fails; what a tap or an observer raises is logged and the
answer goes on; summaries come once every step is closed."""

import asyncio
import logging
from datetime import UTC, datetime
from typing import cast

import orjson
import pytest

from llmproxy.cassette.redact import Redactor
from llmproxy.chain import (
    Chain,
    Context,
    CutStream,
    Door,
    Incoming,
    Network,
    Reply,
    ReplySource,
    ResponseHead,
    Stage,
    Tap,
)
from llmproxy.chain.reply import Meaning
from llmproxy.chain.taps.journal import JournalTap
from llmproxy.chain.taps.record import RecordTap, Sink
from llmproxy.errors import CassetteError
from llmproxy.journal import Journal
from llmproxy.model import Completion, StopReason
from llmproxy.model.exchange import RawExchange, RawRequest
from llmproxy.record_scope import RecordScope
from tests.samples import CHAT

PROXY = Context(Door.PROXY)


def anthropic() -> Incoming:
    sample = CHAT[0]
    return Incoming(RawRequest("POST", "https", sample.host, 443, sample.path, "HTTP/1.1", (), sample.data, None))


def test_a_reply_cannot_be_changed_and_what_it_means_is_decoded_once() -> None:
    decodes: list[int] = []
    completion = Completion(stop_reason=StopReason.END_TURN)

    def decode() -> Completion:
        decodes.append(1)
        return completion

    reply = Reply(200, (), b"{}", source=ReplySource.CASSETTE, meaning=Meaning(decode), shared=True)
    with pytest.raises(AttributeError):
        reply.status = 500  # type: ignore[misc]
    shaped = reply._replace(events=((0.0, b"{}"),), body=None, shared=False)
    assert reply.understood() is completion
    assert shaped.understood() is completion
    assert reply.understood() is completion
    assert decodes == [1]  # served again and again, decoded once
    assert reply.completion is None  # still as it was made


def test_what_a_request_says_is_read_once_and_cannot_be_changed() -> None:
    incoming = anthropic()
    decoded = incoming.decoded
    assert incoming.decoded is decoded
    assert (incoming.route, incoming.model, incoming.path) == (decoded.route, decoded.model, "/v1/messages")
    assert incoming.route is not None
    assert incoming.codec is not None
    with pytest.raises(AttributeError):
        decoded.model = "another"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        incoming.route = None  # type: ignore[misc]


def test_a_request_only_forwarded_and_recorded_is_not_parsed_on_the_proxys_loop() -> None:
    """`llmproxy record`'s chain (nothing answers; the record and journal taps watch) never reads the body it
    forwards: the cassette writer parses it in its own process, and the journal when something reads it."""
    recorded: list[RawExchange] = []

    class Listed:  # the writer's `put`, all the chain calls of it here
        def put(self, exchange: RawExchange) -> None:
            recorded.append(exchange)

    journal = JournalTap(Journal(10), Redactor())
    chain = Chain([], [RecordTap(RecordScope(), cast(Sink, Listed())), journal])  # forwards everything
    incoming = anthropic()
    assert incoming.api is not None  # an LLM API's call, told without the body
    assert chain.answer(incoming, PROXY) is None  # forwarded
    observers = chain.observe(incoming, ResponseHead(200, (("content-type", "application/json"),), False, 0.0))
    assert observers is not None
    exchange = RawExchange(incoming.raw, None, None, datetime.now(UTC), None, None)
    asyncio.run(observers.end(exchange))
    assert recorded == [exchange]
    assert not incoming.body_read
    model = orjson.loads(CHAT[0].data)["model"]
    assert incoming.model == model  # read when asked
    assert incoming.body_read
    entry = journal.journal.get(1)
    assert entry is not None
    assert entry.glance.model == model  # the journal reads the request itself


class Passing(Stage):
    """Passes every request on; notes how the run ended for it."""

    def __init__(self, name: str, failure: Exception | None = None) -> None:
        self.name = name
        self.failure = failure
        self.closed = False
        self.refusals = 0

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        incoming.decline(self.name, f"the {self.name} passes", self.refused)
        return None

    def refused(self) -> None:
        self.refusals += 1

    def close(self) -> None:
        self.closed = True
        if self.failure is not None:
            raise self.failure

    def summary(self) -> list[str]:
        return [f"{self.name}: {'closed' if self.closed else 'open'}"]


class Failing(Tap):
    """Raises wherever it is asked anything."""

    name = "record"

    def __init__(self) -> None:
        self.closed = False

    def reply(self, incoming: Incoming, reply: Reply) -> Reply:
        raise RuntimeError("a bug in a tap")

    def open(self, incoming: Incoming, head: ResponseHead | None) -> "Broken":
        return Broken()

    def close(self) -> None:
        self.closed = True
        raise RuntimeError("a bug in closing")


class Broken:
    def chunk(self, data: bytes, at: float) -> bytes:
        raise RuntimeError("a bug in an observer")

    async def end(self, exchange: RawExchange) -> None:
        raise RuntimeError("a bug at the end")


class Cutting(Tap):
    """Cuts every stream at its first piece, keeping its first byte; notes the exchanges' ends."""

    name = "meter"

    def __init__(self) -> None:
        self.ended: list[RawExchange] = []

    def open(self, incoming: Incoming, head: ResponseHead | None) -> "Cut":
        return Cut(self.ended)


class Cut:
    def __init__(self, ended: list[RawExchange]) -> None:
        self.ended = ended

    def chunk(self, data: bytes, at: float) -> bytes:
        raise CutStream(data[:1])

    async def end(self, exchange: RawExchange) -> None:
        await asyncio.sleep(0)  # an observer that waits (a full queue) holds the flow, not the loop
        self.ended.append(exchange)


def test_every_step_is_closed_though_one_fails_and_the_summary_comes_after(caplog: pytest.LogCaptureFixture) -> None:
    mock = Passing("mock", CassetteError("cannot write the request log"))
    replay = Passing("replay")
    failing = Failing()
    chain = Chain([replay, mock], [failing], Network())
    refused = chain.answer(anthropic(), PROXY)
    assert refused is not None
    assert refused.source is ReplySource.MISS
    assert (mock.refusals, replay.refusals) == (1, 1)  # each declining stage heard its request was refused
    with caplog.at_level(logging.ERROR), pytest.raises(CassetteError, match="request log"):
        chain.close()
    assert (mock.closed, replay.closed, failing.closed) == (True, True, True)
    assert "the record tap failed to close" in caplog.text
    assert chain.summary() == ["mock: closed", "replay: closed"]


def test_what_a_tap_or_an_observer_raises_is_logged_and_the_answer_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    reply = Reply(200, (), b"mocked")

    class Answering(Stage):
        name = "mock"

        def decide(self, incoming: Incoming, context: Context) -> Reply | None:
            return reply

    cutting = Cutting()
    chain = Chain([Answering()], [Failing(), cutting], Network())
    with caplog.at_level(logging.ERROR):
        assert chain.answer(anthropic(), PROXY) is reply
        observers = chain.observe(anthropic(), ResponseHead(200, (), True, 0.0))
        assert observers is not None
        with pytest.raises(CutStream) as cut:
            observers.chunk(b"data", 0.0)
        assert cut.value.keep == b"d"  # the failing observer passed the piece on as it was; the cut kept a byte
        exchange = RawExchange(anthropic().raw, None, "Client disconnected.", datetime.now(UTC), None, None)
        asyncio.run(observers.end(exchange))
    assert cutting.ended == [exchange]
    assert caplog.text.count("the record tap failed on POST https://api.anthropic.com/v1/messages") == 3
