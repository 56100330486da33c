"""A captured exchange read for the tool-call and cost gates alone: its API, model, status, usage and tool
calls, from the request's JSON and the answer's, without converting and decoding it whole as a report's call is
built (`sources.Recorded`). A journal's gates judge thousands of exchanges; the whole conversion redacts every
part of each, which the gates never show, and decodes its whole conversation, which they never read.

What it reads is what the whole reading gives: the model and the URL redacted as a cassette stores them, the
usage the answer reports, and each tool call decoded from its wire value redacted as the cassette's body would
be; a streamed answer is redacted event by event and reassembled, as a cassette stores and reads it. An
exchange whose reading depends on more — an answer without usage (estimated from the conversation) or with an
error in it, a Responses background run's poll (its create is priced by it), a JSON answer of an API without
an answer reader, a WebSocket, a redactor with fields of its own, bodies that are not plain JSON — is left to
the whole reading (`answered_call` gives None). Two differences stay, both on what an API's reader rejects: the
request is not decoded, and a JSON answer is read no further than its usage and tool calls, so an exchange
whose request, or the rest of whose answer, its API cannot read is judged by what was read, where the whole
reading skips it as undecodable.
"""

from collections.abc import Callable
from datetime import datetime
from enum import Enum
from typing import Any, Final, NamedTuple, cast

import orjson

from llmproxy.analysis.calls import ToolUse, tool_use
from llmproxy.cassette.bodies import event_bytes, is_json_type
from llmproxy.cassette.convert import shown_model, url
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.cassette.stream_redact import store_events
from llmproxy.chain.incoming import body_json, detected
from llmproxy.errors import ParseError
from llmproxy.journal import Seen
from llmproxy.model import Operation, Provider, Route, Usage
from llmproxy.model.exchange import RawExchange, RawRequest
from llmproxy.pricing import PriceBook, Priced, Unpriced
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import with_body

NOT_CHAT: Final = "not a chat API"  # why an exchange is no call, as the whole reading says it
_NOTHING: Final = Usage()
_UNKNOWN: Final = object()  # no place of this key read yet
_READ_WHOLE: Final = frozenset({Operation.RESPONSE_RETRIEVE})
"""A Responses background run's polls: the whole reading prices its create (which answered with no usage, so is
read whole too) by the poll that finds it finished."""


class AnsweredCall:
    """A chat call as the tool-call and cost gates read it (the fields of `calls.RecordedCall` they read, with
    the same values); its cost is priced the first time it is read (the tool-call gate never reads it)."""

    __slots__ = (
        "_book",
        "_cost",
        "exchange_id",
        "failed",
        "model",
        "provider",
        "source",
        "started_at",
        "status",
        "tool_calls",
        "url",
        "usage",
        "vendor",
    )

    def __init__(
        self,
        source: str,
        exchange_id: int,
        started_at: datetime,
        provider: Provider,
        vendor: str | None,
        url: str,
        model: str,
        status: int | None,
        usage: Usage,
        tool_calls: tuple[ToolUse, ...],
        book: PriceBook,
    ) -> None:
        self.source, self.exchange_id, self.started_at = source, exchange_id, started_at
        self.provider, self.vendor, self.url, self.model = provider, vendor, url, model
        self.status, self.usage, self.tool_calls = status, usage, tool_calls
        self.failed = status is None or status >= 400
        self._book = book
        self._cost: Priced | Unpriced | None = None

    @property
    def cost(self) -> Priced | Unpriced:
        cost = self._cost
        if cost is None:
            cost = self._cost = self._book.cost(
                self.usage, self.model, at=self.started_at, vendor=self.vendor, url=self.url, provider=self.provider
            )
        return cost


type Known = dict[tuple[object, ...], "_Facts | str | None"]
"""What `answered_call` found of the requests to one place (API, model, URL, redactor), for the next to it: a
journal's thousands of requests go to a few."""


class _Facts(NamedTuple):
    """What a request says that its answer is read and priced by: its API's codec, the model and the URL as
    shown, who bills it."""

    provider: Provider
    codec: ChatCodec
    model: str
    url: str
    vendor: str | None


def answered_call(
    seen: Seen,
    exchange_id: int,
    source: str,
    redactor: Redactor,
    book: PriceBook,
    captured: Callable[[], RawExchange] | None = None,
    reads_calls: bool = True,
    known: Known | None = None,
) -> AnsweredCall | str | None:
    """An exchange as the gates read it: a call, or why it is none (`NOT_CHAT`); None when only the whole
    reading can tell. `captured`: the exchange rebuilt as captured, for a streamed answer (None: read whole).
    `reads_calls` False: a JSON answer's tool calls are not read (the call has none). `known`: what earlier
    calls found of their requests' places, read and added to (None: each read afresh)."""
    request = seen.request
    if redactor.fields or seen.websocket is not None or seen.status == 101 or request.undecodable:
        return None  # a WebSocket's messages (a cassette at rest says so by its status alone) are read whole
    route = seen.route
    if route is not None and seen.model is not None:  # what the chain read of it: no parse
        # The route and the redactor by identity: the chain's detection hands out one route object for each
        # API and place (`incoming.detected`), a tap one redactor, and every entry read holds both alive while
        # `known` lives; an equal one of another identity is only found again. Hashing either by value runs
        # Python (a dataclass's `__hash__`), on every entry.
        key = (id(route), seen.model, request.scheme, request.host, request.port, request.path, id(redactor))
        found = known.get(key, _UNKNOWN) if known is not None else _UNKNOWN
        if found is _UNKNOWN:
            facts = _facts(request, route, route.model or shown_model(redactor, seen.model), redactor, book)
            if known is not None:
                known[key] = facts
        else:
            facts = cast("_Facts | str | None", found)
    else:
        facts = _read(request, redactor, book)
    if not isinstance(facts, _Facts):
        return facts
    status = seen.status
    usage = _NOTHING  # a failed call bills nothing, as the whole reading counts it
    tool_calls: tuple[ToolUse, ...] = ()
    if status is not None and status < 400:
        kind = _kind(seen.headers)
        if seen.streamed or kind is _Kind.STREAM:
            read = _streamed(facts.codec, captured(), redactor) if captured is not None else None
        elif kind is _Kind.OTHER:
            return None
        else:
            read = _answered(facts.codec, seen, redactor.json if reads_calls else None)
        if read is None:
            return None
        usage, tool_calls = read
    return AnsweredCall(
        source, exchange_id, seen.started_at, facts.provider, facts.vendor, facts.url, facts.model, status, usage,
        tool_calls, book,
    )  # fmt: skip


def _read(request: RawRequest, redactor: Redactor, book: PriceBook) -> _Facts | str | None:
    """`_facts` of a request nothing has read: its API detected, its JSON parsed for what settles it."""
    route = detected(request)
    if route is None:
        return NOT_CHAT
    parsed = body_json(request.body)
    if not isinstance(parsed, dict):
        return None
    route = with_body(route, parsed)
    model = route.model or (shown_model(redactor, parsed["model"]) if isinstance(parsed.get("model"), str) else None)
    return _facts(request, route, model, redactor, book)


def _facts(
    request: RawRequest, route: Route, model: str | None, redactor: Redactor, book: PriceBook
) -> _Facts | str | None:
    """What `request`, of API `route` asking for `model` (as shown), says for its answer to be read: None when
    only the whole reading can tell (a Responses background run's poll; no model, which the whole reading takes
    from the decoded conversation or the answer), `NOT_CHAT` for no chat API."""
    if route.operation in _READ_WHOLE:
        return None
    codec = chat_codec(route)
    if codec is None:
        return NOT_CHAT
    if not model:
        return None
    shown = url(request, redactor)
    return _Facts(route.provider, codec, model, shown, book.vendor(route.vendor, shown, route.provider))


def _answered(
    codec: ChatCodec, seen: Seen, shown: Callable[[Any], Any] | None
) -> tuple[Usage, tuple[ToolUse, ...]] | None:
    """A JSON answer's (or one without a content type) usage and tool calls (each redacted by `shown`; None: not
    read) by the codec's answer reader; None when it must be read whole."""
    if codec.read_answer is None or seen.undecodable or seen.body is None:
        return None
    try:
        answer = codec.read_answer(orjson.loads(seen.body), shown)
    except (orjson.JSONDecodeError, ParseError):
        return None
    if answer.error or answer.usage is None:
        return None
    return answer.usage, tuple(tool_use(call) for call in answer.tool_calls)


def _streamed(codec: ChatCodec, raw: RawExchange, redactor: Redactor) -> tuple[Usage, tuple[ToolUse, ...]] | None:
    """A streamed answer's usage and tool calls: its events redacted and reassembled as a cassette stores and
    reads them (a tool call's arguments are redacted event by event there, which no reading of the calls alone
    would show the same); None when it must be read whole."""
    response = raw.response
    if response is None or response.events is None or response.undecodable:
        return None
    try:
        events = store_events(response.events, _content_type(response.headers) or "", redactor)
        completion = codec.decode_stream(iter([event_bytes(event) for event in events]))
    except Exception:  # what the whole reading stores verbatim, or cannot read: it says so
        return None
    if completion.error is not None or completion.usage is None:
        return None
    return completion.usage, tuple(tool_use(call) for call in completion.tool_calls)


class _Kind(Enum):
    """How an answer's content type has it read: as JSON (or with none), as an event stream, or only whole."""

    JSON = "json"
    STREAM = "stream"
    OTHER = "other"


def _kind(headers: tuple[tuple[str, str], ...]) -> _Kind:
    """The kind of answer `headers` announce, found once for each distinct set of headers: a journal's answers
    come from a few servers, each sending the same few."""
    kind = _KINDS.get(headers)
    if kind is None:
        content_type = _content_type(headers) or ""
        if StreamCapture.streams(content_type):
            kind = _Kind.STREAM
        elif not content_type or is_json_type(content_type):
            kind = _Kind.JSON
        else:
            kind = _Kind.OTHER
        if len(_KINDS) >= _KINDS_KEPT:
            _KINDS.clear()
        _KINDS[headers] = kind
    return kind


_KINDS: dict[tuple[tuple[str, str], ...], _Kind] = {}
_KINDS_KEPT: Final = 256


def _content_type(headers: tuple[tuple[str, str], ...]) -> str | None:
    """The content type, the last one sent winning as the conversion reads headers."""
    found = None
    for name, value in headers:
        if name.lower() == "content-type":
            found = value
    return found
