"""The two kinds of step in the answer chain, and what they are given.

A `Stage` is a step of the request side: `decide(incoming, context)` returns a `Reply` that answers the
request, or None to pass it on (leaving a `Decline` on the request saying why). A `Tap` is a step of the
response side: it sees what answers — a reply a stage made, whole (`reply`: observe it, or return another:
cut, corrupt, delay its events), or the upstream's answer as it arrives (`open` gives an `Observer` that
sees each piece, may rewrite it, or cut the stream). Both may run on several threads at once and must be
quick: they run on the proxy's event loop.

Each is as small as an httpx transport (`handle_request`, `close`): the one call that does its work, and
`close` at the end of the run. A step raises what goes wrong; the chain catches it, logs it and carries on,
as mitmproxy's addon manager does for its addons (`safecall`). What a step may say about itself is a protocol
of its own, which the chain looks for: `Explains` (what it does, for `--explain-chain`) and `Summarises` (what
it did, once the run is over).

Settings that change while the proxy runs live in one small state object per stage, which the stage reads on
each request (`llmproxy.chain.state`).
"""

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.chain.incoming import Door, Incoming
from llmproxy.chain.reply import Headers, Reply, header
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
        """The reply to `incoming`, or None to pass it on (`incoming.decline(...)`: why)."""
        raise NotImplementedError

    def close(self) -> None:
        """The run is over: release what it holds, keeping what its summary needs. Raises LlmproxyError for what
        could not be finished (a file not written whole); the chain closes the other steps all the same."""


@runtime_checkable
class Explains(Protocol):
    """A step that says what it does, in a line, for `--explain-chain` (one that does not is named by its class)."""

    def explain(self) -> str: ...


@runtime_checkable
class Summarises(Protocol):
    """A step with something to say once the run is over and it is closed: its lines of the summary."""

    def summary(self) -> list[str]: ...


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
        content_type = header(headers, "content-type") or ""
        raw = incoming.raw
        route = detect(raw.host, raw.path, incoming.headers, method=raw.method, port=raw.port)  # by URL alone
        streamed = StreamCapture.streams(content_type) or (
            route is not None and route.streaming is True and status == 200
        )
        return cls(status, headers, streamed, started)

    def header(self, name: str) -> str | None:
        return header(self.headers, name)


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
        on to the client: the same bytes, others, or b"" for nothing. Raise `CutStream` to end it here.
        Synchronous: it runs inside mitmproxy's stream callable."""
        ...

    async def end(self, exchange: RawExchange) -> None:
        """The exchange as it ended (the response's body is None when it was streamed). The flow goes on once
        it returns: an observer that must wait (the recorder's full queue: back-pressure) holds that flow, not
        the event loop."""
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

    def close(self) -> None:
        """The run is over, as `Stage.close`."""
