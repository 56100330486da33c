"""What every chat codec offers, and the small helpers they share.

A codec turns one provider's bytes into the neutral model and back (docs/architecture.md#the-core). Bodies are bytes in
and bytes out, and streams are lists of wire events (each element one event, already framed), so callers never need to
know a provider's framing: the replay relay and the mock send the elements one by one.
"""

import functools
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, NamedTuple, Protocol

import orjson

from llmproxy.errors import ParseError
from llmproxy.model import (
    Completion,
    Conversation,
    ErrorKind,
    Message,
    Operation,
    Provider,
    ProviderError,
    ToolCall,
    Usage,
)
from llmproxy.providers.node import Node, Parsed

type JsonObject = dict[str, Any]

DEFAULT_DELTA_CHARS = 16


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """A complete error response: status, headers (content-type and retry hints included) and body."""

    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class RateLimits:
    """Rate-limit state to advertise in response headers. Resets are seconds from `now`. `input_tokens_*` and
    `output_tokens_*` are separate buckets, for providers that limit them apart (Anthropic's ITPM and OTPM)."""

    requests_limit: int | None = None
    requests_remaining: int | None = None
    requests_reset: float | None = None
    tokens_limit: int | None = None
    tokens_remaining: int | None = None
    tokens_reset: float | None = None
    retry_after: float | None = None
    input_tokens_limit: int | None = None
    input_tokens_remaining: int | None = None
    input_tokens_reset: float | None = None
    output_tokens_limit: int | None = None
    output_tokens_remaining: int | None = None
    output_tokens_reset: float | None = None


class EncodeResponse(Protocol):
    def __call__(self, completion: Completion, request: JsonObject | None = None, /) -> bytes: ...


class EncodeStream(Protocol):
    def __call__(
        self, completion: Completion, request: JsonObject | None = None, /, *, delta_chars: int = DEFAULT_DELTA_CHARS
    ) -> list[bytes]: ...


class EncodeError(Protocol):
    def __call__(self, kind: ErrorKind, message: str, /, *, retry_after: float | None = None) -> ErrorReply: ...


type EncodeRateLimits = Callable[[RateLimits, datetime], dict[str, str]]
"""The rate-limit headers a provider sends for the given state, at the given instant."""


class Answer(NamedTuple):
    """What a gate reads of an answer (`ChatCodec.read_answer`): its usage, its tool calls, and whether it is an
    error in place of the answer."""

    usage: Usage | None
    tool_calls: tuple[ToolCall, ...]
    error: bool


@dataclass(frozen=True, slots=True)
class ChatCodec:
    """One chat API's wire format (e.g. Anthropic Messages, OpenAI Chat Completions): the functions each
    provider package implements, one module per concept, gathered under the route they serve."""

    provider: Provider
    operation: Operation

    decode_request: Callable[[bytes | Parsed], Conversation]
    """The request body (or its JSON, already parsed) as a Conversation. Raises `ParseError` on anything that
    is not this format."""

    assistant_turns: Callable[[Any], int]
    """Completed assistant turns in a parsed request body, counted without decoding it: for a body that
    decodes, `decode_request(body).assistant_turns`; anything else counts what it can and never raises. The
    mock's answer ids need the turn on every request, and a decode costs several times the whole answer."""

    decode_response: Callable[[bytes | Parsed], Completion]
    """A non-streaming response body (or its JSON, already parsed: a cassette stores it so) as a Completion.
    Raises `ParseError`."""

    decode_stream: Callable[[Iterable[bytes]], Completion]
    """A streamed response (bytes as they arrived, split anywhere) reassembled into a Completion. A stream
    cut short gives what arrived; only bytes that are not this format raise `ParseError`."""

    encode_response: EncodeResponse
    """The non-streaming body a real server would send for the completion (the request may refine it). A
    completion with an `error` is sent as the provider sends a failed answer: the error body alone where a
    body cannot carry content and an error (Anthropic, Chat Completions), a `failed` response (Responses)."""

    encode_stream: EncodeStream
    """The exact event sequence a real server would stream, one framed event per element. Text, reasoning
    and tool arguments are cut into deltas of at most `delta_chars` characters."""

    visible: Callable[[Completion], Completion]
    """The part of a completion this wire format can express (Chat Completions has no reasoning, for
    example): ``decode(encode(c)) == visible(c)`` for streams, and for bodies of completions without an
    `error` (a 200 body cannot carry content and an error together)."""

    decode_error: Callable[[int, bytes], ProviderError]
    """An error response (status, body) as a ProviderError; unknown shapes still give a kind from the status."""

    encode_error: EncodeError
    """The provider-correct error response for a kind, with `retry-after` when given."""

    rate_limit_headers: EncodeRateLimits
    """The rate-limit headers this provider sends for the given state, at the given instant."""

    stream_media_type: str = "text/event-stream"

    read_stream: Callable[[Iterable[Parsed]], Completion] | None = None
    """`decode_stream` of an SSE stream whose events each carry one ``data:`` line, given those lines' JSON
    already parsed, in order: a recording's conversion parses every event as it stores it, and the audit
    reads what it parsed rather than framing and parsing the stream again. None: the bytes are decoded."""

    latest_message: Callable[[Any], Message | None] | None = None
    """The last message of a parsed request body, read alone by the codec's own message reader (None when the
    body has none): for a body that decodes, `decode_request(body).latest`, but for the names of its tool
    results, which only the whole history gives. Raises `ParseError` when that message is not this format. A
    verify over thousands of requests reads the latest message of each, and a whole decode costs several times
    one message's. None: the API's messages are not one per item of a list (a whole decode is the reading)."""

    asks_nothing: Callable[[Any], bool] = lambda body: False
    """Whether a parsed request asks for no output at all (Responses' `generate: false`: a warm-up that only
    loads the prompt). The mock answers it with an empty completion and spends no expectation on it."""

    read_answer: Callable[[Any, Callable[[Any], Any] | None], Answer] | None = None
    """A parsed non-streaming answer's usage and tool calls, read without the rest, each tool call's wire value
    passed through the second argument first (a redactor's `json`, as a recording stores the body; None: the
    usage alone, no tool call read, as a listing shows it): for a body
    that decodes, `decode_response(body)`'s usage and tool calls, redacted, or that it is an error. Raises
    `ParseError` when what it reads is not this format. The journal's gates judge thousands of answers by these
    alone, and a whole decode costs several times this reading. None: decoded whole."""

    read_usage: Callable[[Any], Usage | None] | None = None
    """`read_answer(body, None)`'s usage alone, None for an error answer too, read without making what a gate
    needs beside it: the dashboard reads the usage of every answer it lists. None: `read_answer` reads it."""


@functools.lru_cache(maxsize=1024)
def split_deltas(text: str, size: int = DEFAULT_DELTA_CHARS) -> tuple[str, ...]:
    """Cut text into stream deltas of at most `size` characters, preferring to cut after whitespace.
    Joining the pieces gives `text` back; empty text gives no pieces. Remembered: a mock or a replay
    streams the same answers again and again."""
    if size < 1:
        raise ValueError("delta size must be at least 1")
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            if cut > start:
                end = cut + 1
        pieces.append(text[start:end])
        start = end
    return tuple(pieces)


def role_count(body: Any, key: str, role: str) -> int:
    """How many of the objects listed under `key` in a parsed request body have this `role` (the turn count of
    APIs with one wire message per turn); a body of another shape counts nothing."""
    items = body.get(key) if isinstance(body, dict) else None
    if not isinstance(items, list):
        return 0
    return sum(1 for item in items if isinstance(item, dict) and item.get("role") == role)


def latest_in(
    key: str, what: str, read: Callable[[Node], Message], lone: bool = False
) -> Callable[[Any], Message | None]:
    """A codec's `latest_message` for an API that sends one wire message per message, listed under `key`: the
    last one read by `read`, the codec's reader of one message. `lone`: the list may be one value alone (a
    proto-JSON repeated field, as Gemini's `contents`)."""

    def latest(body: Any) -> Message | None:
        items = Node(body, what)[key]
        if not items.present:
            return None
        if not items.is_list():
            if lone:
                return read(items)
            raise items.fail("a list of messages")
        listed: list[Any] = items.value
        return read(Node(listed[-1], what, len(listed) - 1, items)) if listed else None

    return latest


def assistant_messages(body: Any) -> int:
    """The turns of APIs that send one `assistant` message per turn in `messages` (Anthropic, Chat Completions,
    Bedrock Converse, Ollama chat)."""
    return role_count(body, "messages", "assistant")


def says_more(obj: Mapping[str, Any], known: Iterable[str]) -> bool:
    """Whether a wire object sets a field beyond `known` (a null, [] or {} says nothing): then its neutral
    part cannot say all of it, and the decoders keep it whole."""
    fields = frozenset(known)
    return any(key not in fields and value is not None and value != [] and value != {} for key, value in obj.items())


def stable_id(prefix: str, *parts: object) -> str:
    """A deterministic id for encoders that must invent one (same content, same id; no clock, no rng)."""
    digest = hashlib.sha256(repr(parts).encode()).hexdigest()[:24]
    return f"{prefix}{digest}"


def status_kind(status: int) -> ErrorKind:
    """The error kind a bare HTTP status implies, for bodies that say nothing more."""
    return _STATUS_KINDS.get(status, ErrorKind.SERVER_ERROR if status >= 500 else ErrorKind.INVALID_REQUEST)


def decode_error_body(read: Callable[[Node, int], ProviderError], what: str, status: int, body: bytes) -> ProviderError:
    """An error body as `read` reads the provider's shape; any other body (a gateway's HTML page…) keeps its
    text, and the status gives the kind."""
    try:
        return read(Node.parse(body, what), status)
    except ParseError:
        return unreadable_error(status, body)


def unreadable_error(status: int, body: bytes) -> ProviderError:
    """An error body in no shape llmproxy knows: its text, and the kind its status implies."""
    return ProviderError(status_kind(status), body.decode("utf-8", "replace"), None, status)


_STATUS_KINDS = {
    400: ErrorKind.INVALID_REQUEST,
    401: ErrorKind.AUTHENTICATION,
    402: ErrorKind.QUOTA_EXCEEDED,
    403: ErrorKind.PERMISSION,
    404: ErrorKind.NOT_FOUND,
    408: ErrorKind.TIMEOUT,
    413: ErrorKind.REQUEST_TOO_LARGE,
    429: ErrorKind.RATE_LIMIT,
    500: ErrorKind.SERVER_ERROR,
    502: ErrorKind.SERVER_ERROR,
    503: ErrorKind.OVERLOADED,
    504: ErrorKind.TIMEOUT,
    529: ErrorKind.OVERLOADED,
}


KIND_STATUSES: Final[Mapping[ErrorKind, int]] = {
    ErrorKind.INVALID_REQUEST: 400,
    ErrorKind.AUTHENTICATION: 401,
    ErrorKind.QUOTA_EXCEEDED: 402,
    ErrorKind.PERMISSION: 403,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.REQUEST_TOO_LARGE: 413,
    ErrorKind.RATE_LIMIT: 429,
    ErrorKind.SERVER_ERROR: 500,
    ErrorKind.OVERLOADED: 503,
    ErrorKind.TIMEOUT: 504,
}
"""One status per kind, each of which `status_kind` reads back as that kind: for APIs whose error bodies
name no type, so the status alone carries the kind (Ollama, Cohere, Voyage)."""


def retry_after_headers(retry_after: float | None) -> dict[str, str]:
    """`retry-after` in whole seconds (rounded up, as servers send it) plus `retry-after-ms`, which the
    Stainless SDKs read first, so sub-second hints are honoured exactly."""
    if retry_after is None:
        return {}
    whole = max(0, int(-(-retry_after // 1)))
    return {"retry-after": str(whole), "retry-after-ms": str(round(retry_after * 1000))}


def parse_arguments(text: str) -> tuple[JsonObject, str | None]:
    """Tool-call arguments from their JSON text: ``(object, None)``, or ``({}, text)`` when the text is not a
    JSON object (see `ToolCall.invalid_arguments`). Empty text means no arguments."""
    if not text.strip():
        return {}, None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}, text
    return (value, None) if isinstance(value, dict) else ({}, text)


def dump_arguments(call: ToolCall) -> str:
    """The JSON text of a call's arguments as a provider sends it (compact, keys in the given order)."""
    if call.invalid_arguments is not None:
        return call.invalid_arguments
    return orjson.dumps(call.arguments).decode()


def split_data_url(url: str) -> tuple[str | None, str] | None:
    """``data:<media type>;base64,<data>`` as (media type or None, base64 data); None for anything else."""
    if not url.startswith("data:"):
        return None
    meta, comma, data = url[5:].partition(",")
    if not comma or not meta.endswith(";base64"):
        return None
    return meta.removesuffix(";base64") or None, data


def dump_json(value: Any) -> bytes:
    """Compact JSON bytes, as the providers send bodies and event payloads."""
    return orjson.dumps(value)
