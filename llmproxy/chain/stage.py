"""The two kinds of step in the answer chain, and what they are given.

A `Stage` is a step of the request side: `decide(incoming, context)` returns a `Reply` that answers the
request, or None to pass it on (leaving a `Decline` on the request saying why). A `Tap` is a step of the
response side: it sees what answers — a reply a stage made, whole (`reply`: observe it, or return another:
cut, corrupt, delay its events), or the upstream's answer as it arrives (`open` gives an `Observer` that
sees each piece, may rewrite it, or cut the stream). Both may run on several threads at once and must be
quick: they run on the proxy's event loop.

Settings that change while the proxy runs live in one small state object per stage, which the stage reads on
each request (`llmproxy.chain.state`).
"""

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.chain.incoming import Decline, Door, Incoming
from llmproxy.chain.reply import Headers, Reply
from llmproxy.errors import LlmproxyError
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.routes import detect


@dataclass(frozen=True, slots=True)
class Context:
    """Where a request is being decided: made once per door, not per request."""

    door: Door
    forwards: bool = True  # whether this door can send a request upstream (the relay cannot: it has no origin)


class Stage:
    """A request-side step. `name` is its slot in the declared order (`chain.REQUEST_SIDE`)."""

    name: str = ""

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        raise NotImplementedError

    def explain(self) -> str:
        """What it does, in a line, for `--explain-chain`."""
        return ""

    def refused(self, decline: Decline) -> None:
        """A request this stage declined was refused (nothing answered, the network closed): count the miss."""

    def start(self) -> None:
        """The run has started cleanly."""

    def close(self, failures: list[LlmproxyError]) -> list[str]:
        """The run is over: release what it holds; its lines of the summary. What could not be finished (a
        file not written whole) goes into `failures`, after everything is released."""
        return []


@dataclass(frozen=True, slots=True)
class ResponseHead:
    """An answer's status and headers, as a tap first sees them. `streamed`: the body comes piece by piece (a
    stream: each piece is handed on as it arrives); otherwise it comes whole, in `Observer.end`. `started`:
    when the request began (seconds since the epoch)."""

    status: int
    headers: Headers
    streamed: bool
    started: float

    @classmethod
    def of(cls, incoming: Incoming, status: int, headers: Headers, started: float) -> "ResponseHead":
        """Streamed: an event-stream media type, or a 200 on an API that always streams (Bedrock's
        event-stream, Gemini's `alt=sse`), whatever the content type says."""
        content_type = next((value for name, value in headers if name.lower() == "content-type"), "")
        raw = incoming.raw
        route = detect(raw.host, raw.path, incoming.headers, method=raw.method, port=raw.port)  # by URL alone
        streamed = StreamCapture.streams(content_type) or (
            route is not None and route.streaming is True and status == 200
        )
        return cls(status, headers, streamed, started)

    def header(self, name: str) -> str | None:
        return next((value for key, value in self.headers if key.lower() == name), None)


class CutStream(Exception):
    """Raised by `Observer.chunk`: end the answer here, as a dropped connection would — after `keep`, the part
    of this piece that still goes to the client."""

    def __init__(self, keep: bytes = b"") -> None:
        super().__init__("stream cut")
        self.keep = keep


class Observer(Protocol):
    """One live answer, seen by one tap."""

    def chunk(self, data: bytes, at: float) -> bytes:
        """A piece of a streamed body as it passes (`at`: when, in seconds since the epoch); returns what goes
        on to the client: the same bytes, others, or b"" for nothing. Raise `CutStream` to end it here."""
        ...

    def end(self, exchange: RawExchange) -> Awaitable[None] | None:
        """The exchange as it ended (the response's body is None when it was streamed). May return an
        awaitable the door awaits before the flow goes on (back-pressure: the recorder's full queue)."""
        ...


class Tap:
    """A response-side step. `name` is its slot in the declared order (`chain.RESPONSE_SIDE`)."""

    name: str = ""

    def reply(self, incoming: Incoming, reply: Reply) -> Reply:
        """A reply a stage made, known whole before it is sent: observe it, or return another in its place."""
        return reply

    def open(self, incoming: Incoming, head: ResponseHead | None) -> Observer | None:
        """The upstream is answering `incoming` (`head` None: it failed before it answered): an observer for
        this answer, or None to leave it alone."""
        return None

    def explain(self) -> str:
        return ""

    def start(self) -> None:
        """The run has started cleanly."""

    def close(self, failures: list[LlmproxyError]) -> list[str]:
        return []
