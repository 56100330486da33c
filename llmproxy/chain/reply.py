"""What answers a request, whoever answers it — the mock, a cassette, an injected fault, llmproxy refusing, or
the upstream: the status and headers, then either a whole body or timed events, and, when known, what it
means (the completion and its usage). The door that took the request sends it: mitmproxy's flow, or the
loopback relay for events that must keep their timing."""

import functools
from collections.abc import Callable
from enum import StrEnum
from http import HTTPStatus
from typing import NamedTuple

from llmproxy.model import Completion, Usage

type Headers = tuple[tuple[str, str], ...]
type Events = tuple[tuple[float, bytes], ...]

PLAIN_TEXT = ("content-type", "text/plain; charset=utf-8")


class ReplySource(StrEnum):
    """Who answered a request (a report's `Source` is something else: a cassette it read)."""

    MOCK = "mock"  # an expectation
    CASSETTE = "cassette"  # a recorded exchange
    FAULT = "fault"  # injected on purpose (chaos, a quota, a budget)
    MISS = "miss"  # nothing may answer and the network is closed: llmproxy refuses, saying why
    BACKGROUND = "background"  # a coding CLI's telemetry, update check…, answered harmlessly
    ERROR = "error"  # llmproxy failed to answer (a bad expectation, a bug): it says why and fails closed
    UPSTREAM = "upstream"  # the real server
    RELAYED = "relayed"  # a WebSocket whose messages the chain answers one by one, on the relay


class Meaning:
    """What a reply's bytes say, found out the first time something asks (the meter, a token quota) and kept: a
    recording served again and again is decoded once. A reply made from another (`_replace`) shares it, as it
    shares the bytes."""

    __slots__ = ("_completion", "_decode")

    def __init__(self, decode: Callable[[], Completion | None]) -> None:
        self._decode: Callable[[], Completion | None] | None = decode
        self._completion: Completion | None = None

    def __call__(self) -> Completion | None:
        decode = self._decode
        if decode is not None:  # two threads may both decode: the same bytes, the same completion
            self._completion, self._decode = decode(), None
        return self._completion


class Reply(NamedTuple):
    """`headers` never hold framing (content-length, transfer-encoding): the door frames the body. `events`
    are (seconds after the request arrived, bytes), each one framed wire event; a reply with events is sent
    event by event at those offsets. A reply may be served many times (replay serves one recording again and
    again), so it cannot be changed once made: build another (`reply._replace(...)`). A door may keep its own
    form of a `shared` reply, built the first time it is sent, itself.

    A named tuple, not a frozen dataclass: the mock makes one for every answer, and a frozen dataclass sets each
    of its thirteen fields through a call of `object.__setattr__` — a twentieth of a mocked answer's cost."""

    status: int
    headers: Headers
    body: bytes | None = None
    events: Events | None = None
    source: ReplySource = ReplySource.MOCK
    reason: str = ""  # empty: the standard phrase for the status
    notes: tuple[str, ...] = ()  # for the log: "usage estimated"
    warnings: tuple[str, ...] = ()  # for the log and stderr: "structured output invalid: …"
    completion: Completion | None = None  # what the answer says, when the stage that made it knows
    meaning: Meaning | None = None  # or how to find out
    shared: bool = False  # served more than once (a recording): worth a door keeping its own form of it
    cut: bool = False  # after the events the connection is dropped, with no clean end (a stream cut short)
    drop: bool = False  # no answer at all: the connection is closed before anything is sent
    recorded: tuple[float | None, float | None] | None = None  # a replay's: how long, and to the first byte,
    # the recorded answer took (milliseconds), where the replay answers at once

    @property
    def paced(self) -> bool:
        """Whether some event must wait: then only the relay can send it (mitmproxy sends a made response whole)."""
        return self.events is not None and any(at > 0 for at, _ in self.events)

    @property
    def relayed(self) -> bool:
        """Whether only the relay can send it: it waits between events, or it ends by dropping the connection."""
        return self.cut or self.paced

    @property
    def data(self) -> bytes:
        """The whole body as sent: the events joined when the reply has events."""
        if self.events is not None:
            return b"".join(data for _, data in self.events)
        return self.body or b""

    @property
    def phrase(self) -> str:
        return self.reason or reason_phrase(self.status)

    def header(self, name: str) -> str | None:
        return header(self.headers, name)

    def understood(self) -> Completion | None:
        """The completion this reply carries: known, or decoded (once) from its bytes."""
        if self.completion is not None or self.meaning is None:
            return self.completion
        return self.meaning()

    @property
    def usage(self) -> Usage | None:
        completion = self.understood()
        return completion.usage if completion is not None else None


def header(headers: Headers, name: str) -> str | None:
    """The value of the header `name` (lower-case), the first when it is sent more than once; None without it."""
    return next((value for key, value in headers if key.lower() == name), None)


def text_reply(status: int, message: str, source: ReplySource) -> Reply:
    """A plain-text answer of llmproxy's own: a refusal or a failure, saying why."""
    return Reply(status, (PLAIN_TEXT,), message.encode(), source=source)


@functools.cache
def reason_phrase(status: int) -> str:
    """The standard phrase for a status ("Too Many Requests"); empty for a status HTTP does not name."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
