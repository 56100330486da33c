"""Whether llmproxy's codecs read an exchange: its request, and its answer (a body or a stream).

Record, replay and mock never depend on it — the bytes go on as they came whatever a decoder thinks — but a
request or answer that does not decode is one a report cannot price and a strict replay cannot explain.
`audit` says what failed (which part, the JSON path the decoder named, the first 200 characters) and how many
parts were kept whole as opaque (`OtherPart`: server tools, citations, …); `DecodeTally` counts them per
route for an end-of-run summary; `llmproxy cassette check --decode` lists them per exchange.
"""

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from llmproxy.errors import ParseError
from llmproxy.model import Completion, Conversation, OtherPart, Route
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import chat_codec, embedding_codec, rerank_codec
from llmproxy.words import plural

EXCERPT_CHARS: Final = 200
SHOWN_FAILURES: Final = 20  # the summary names this many failures; it counts them all


type Part = Literal["request", "response"]


@dataclass(frozen=True, slots=True)
class DecodeFailure:
    part: Part
    message: str  # the decoder's own, naming what and where
    path: str | None  # the JSON path it named
    excerpt: str  # the first 200 characters of what did not decode

    def __str__(self) -> str:
        return f"{self.part}: {self.message}: {self.excerpt!r}"


@dataclass(frozen=True, slots=True)
class Audit:
    route: Route
    failures: tuple[DecodeFailure, ...] = ()
    opaque: int = 0  # parts kept whole, in the request and the answer

    @property
    def label(self) -> str:
        return route_label(self.route)


def route_label(route: Route) -> str:
    """`openai chat_completions (deepseek)`: the API, and who served it when that is another vendor."""
    label = f"{route.provider.value} {route.operation.value}"
    return f"{label} ({route.vendor})" if route.vendor else label


@dataclass(frozen=True, slots=True)
class Answer:
    """What came back: a status, and a body or a stream's events (each as it crossed the wire)."""

    status: int
    body: bytes | None = None
    events: Sequence[bytes] | None = None
    parsed: Parsed | None = None  # the body's JSON, when the caller parsed it already: not parsed again
    payloads: Sequence[Parsed] | None = None  # the events' SSE payloads, likewise (see `ChatCodec.read_stream`)


@dataclass(frozen=True, slots=True)
class RequestRead:
    """How a request decoded: its failure, or how many parts it kept whole as opaque."""

    failure: DecodeFailure | None
    opaque: int = 0


def read_request(chat: ChatCodec, request: bytes, parsed: Parsed | None = None) -> RequestRead:
    """Decode a chat request (`parsed`: the same body already parsed, or another document to decode in its
    place; a failure quotes `request`)."""
    document = request if parsed is None else parsed
    conversation, failed = _attempt("request", request, lambda: chat.decode_request(document))
    return RequestRead(failed, _opaque_parts(conversation))


def audit(
    route: Route, request: bytes, answer: Answer | None, read: Callable[[ChatCodec], RequestRead] | None = None
) -> Audit | None:
    """Decode an exchange's request and (successful) answer with the route's codec; None for a route no
    codec reads (a model list, a count of tokens). Error answers are not audited: every error body decodes,
    into a kind from its status at worst. `read`: how a chat request is decoded, when the caller knows a
    cheaper way to the same result than decoding it whole (`cassette.audit.RecordingAudit`)."""
    chat = chat_codec(route)
    if chat is not None:
        requested = read(chat) if read is not None else read_request(chat, request)
        failures = [requested.failure] if requested.failure else []
        opaque = requested.opaque
        if answer is not None and answer.status < 400:
            if answer.events is not None:
                events = answer.events
                data = b"".join(events)
                payloads, read_stream = answer.payloads, chat.read_stream
                if payloads is not None and read_stream is not None:
                    completion, failed = _attempt("response", data, lambda: read_stream(payloads))
                else:
                    completion, failed = _attempt("response", data, lambda: chat.decode_stream(events))
            else:
                data = answer.body or b""
                document = data if answer.parsed is None else answer.parsed
                completion, failed = _attempt("response", data, lambda: chat.decode_response(document))
            failures += [failed] if failed else []
            opaque += _opaque_answer(completion)
        return Audit(route, tuple(failures), opaque)
    vectors = embedding_codec(route) or rerank_codec(route)
    if vectors is None:
        return None
    _, failed = _attempt("request", request, lambda: vectors.decode_request(request))
    failures = [failed] if failed else []
    if answer is not None and answer.status < 400 and answer.body is not None:
        body = answer.body
        _, failed = _attempt("response", body, lambda: vectors.decode_response(body))
        failures += [failed] if failed else []
    return Audit(route, tuple(failures))


def _attempt[T](part: Part, data: bytes, decode: Callable[[], T]) -> tuple[T | None, DecodeFailure | None]:
    try:
        return decode(), None
    except ParseError as error:
        return None, DecodeFailure(part, str(error), error.path, excerpt(data))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as error:  # a decoder bug
        return None, DecodeFailure(part, f"{type(error).__name__}: {error}", None, excerpt(data))


def excerpt(data: bytes) -> str:
    return data[: EXCERPT_CHARS * 4].decode("utf-8", "replace")[:EXCERPT_CHARS]


def _opaque_parts(conversation: Conversation | None) -> int:
    if conversation is None:
        return 0
    return sum(isinstance(part, OtherPart) for message in conversation.messages for part in message.parts)


def _opaque_answer(completion: Completion | None) -> int:
    return 0 if completion is None else completion.opaque


@dataclass
class DecodeTally:
    """Audits counted per route, for the summary a run ends with. Thread-safe: the proxy's threads add."""

    checked: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    opaque: Counter[str] = field(default_factory=Counter)
    shown: list[tuple[str, str, DecodeFailure]] = field(default_factory=list)  # (where, route, failure)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, result: Audit | None, where: str = "") -> None:
        """`where` names the exchange in the summary ("exchange 7")."""
        if result is None:
            return
        label = result.label
        with self._lock:
            self.checked[label] += 1
            self.opaque[label] += result.opaque
            if result.failures:
                self.failed[label] += 1
            for failure in result.failures:
                if len(self.shown) < SHOWN_FAILURES:
                    self.shown.append((where, label, failure))

    def lines(self) -> list[str]:
        """Nothing when every exchange decoded; else a count per route and the failures themselves."""
        lines: list[str] = []
        opaque = sum(self.opaque.values())
        failed = sum(self.failed.values())
        if failed:
            routes = ", ".join(f"{label} {count}" for label, count in sorted(self.failed.items()))
            total = sum(self.checked.values())
            lines.append(
                f"{failed} of {plural(total, 'exchange')} did not decode (recorded and served as they came): {routes}"
            )
            for where, label, failure in self.shown:
                lines.append(f"  not decoded: {where + ': ' if where else ''}{label} {failure}")
            if failed > len(self.shown):
                lines.append(f"  … and {failed - len(self.shown)} more: `llmproxy cassette check --decode` lists all")
        if opaque:
            routes = ", ".join(f"{label} {count}" for label, count in sorted(self.opaque.items()) if count)
            kept = plural(opaque, "part")
            lines.append(f"{kept} kept whole, with no neutral meaning (server tools, citations…): {routes}")
        return lines

    def __getstate__(self) -> dict[str, object]:
        """Pickled without its lock (the writer process sends its summary back)."""
        return {name: getattr(self, name) for name in ("checked", "failed", "opaque", "shown")}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


def tally(audits: Iterable[tuple[str, Audit | None]]) -> DecodeTally:
    counted = DecodeTally()
    for where, result in audits:
        counted.add(result, where)
    return counted
