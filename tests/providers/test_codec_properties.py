"""Properties every chat codec must have, whatever the provider. Each test runs once per codec in
`CHAT_CODECS`, so registering a codec holds it to all of them.

* Round trips: decoding what was encoded gives back what the wire can carry (`visible`, itself
  idempotent), for bodies and for streams cut into any delta size and split at any byte; the request's
  model fills a missing one; error replies decode to their kind and message.
* Robustness: decoders return, or raise llmproxy's `ParseError`, and raise nothing else, whatever arrives:
  arbitrary bytes; arbitrary JSON spelled with the codec's own words; real documents (request fixtures,
  captured CLI requests, encoded bodies and streams) with each value in turn removed or retyped, and with
  random values replaced or removed anywhere; arbitrary sequences of the codec's real, corrupted or
  made-up stream events.
"""

import contextlib
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.cassette.redact import REDACTOR
from llmproxy.cassette.stream_capture import Framing, framing
from llmproxy.errors import ParseError
from llmproxy.framing import eventstream, ndjson
from llmproxy.framing.sse import decode_all, encode_event
from llmproxy.model import (
    Completion,
    Conversation,
    ErrorKind,
    Message,
    ProviderError,
    StopReason,
    ToolCall,
    ToolResultPart,
)
from llmproxy.providers.base import ChatCodec
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import CHAT_CODECS
from tests.golden.cases import CASES
from tests.providers.strategies import (
    CHARACTERS,
    completions,
    dump,
    every_edit,
    fuzz_values,
    mutated,
    splits,
    texts,
    words_in,
    words_of,
)

CODECS = pytest.mark.parametrize("name", list(CHAT_CODECS))
FIXTURES = Path(__file__).parents[1] / "fixtures"
# the codec each CLI speaks
CAPTURED_BY = {
    "claude": "anthropic-messages",
    "codex": "openai-responses",
    "gemini": "gemini-code-assist",
    "opencode": "anthropic-messages",
}
DECODER_ONLY_EVENT_TYPES = {  # events a decoder reads that its encoder never sends
    "anthropic-messages": ["ping"],
    "openai-responses": ["error", "response.queued", "response.reasoning_text.delta", "response.reasoning_text.done"],
}
ERROR_BODY_ALONE = {
    "anthropic-messages",
    "openai-chat",
    "ollama-chat",
    "ollama-generate",
    "bedrock-converse",
    "bedrock-invoke-anthropic",
    "gemini-generate",
    "gemini-code-assist",
    "cohere-chat",
    "cohere-chat-v1",
}
"""Codecs whose 200 body cannot carry content and an error, so an errored completion is sent as its error
body alone. (Responses sends a `failed` response object, output included.)"""

MODEL_NOT_ON_WIRE = {"bedrock-converse", "cohere-chat", "cohere-chat-v1"}  # the response names no model
REQUEST_FIXTURES = {
    "bedrock-converse": "bedrock_converse",
    "bedrock-invoke-anthropic": "bedrock_invoke",
    "cohere-chat-v1": "cohere_chat_v1",
}
"""Request fixture folders of codecs that share a package (or a request decoder) with another codec."""

# The golden cases, and beyond them: every stop reason (none too), no identity, no usage, failures part-way
# (one with a signature alone: redacted reasoning).
SAMPLES = [
    *CASES.values(),
    *(replace(CASES["text"], stop_reason=stop) for stop in [None, *StopReason]),
    replace(CASES["text"], id=None, model=None, created=None),
    replace(CASES["tool_call"], usage=None),
    replace(CASES["parallel_tools"], error=ProviderError(ErrorKind.OVERLOADED, "Overloaded")),
    replace(CASES["reasoning"], reasoning=None, error=ProviderError(ErrorKind.SERVER_ERROR, "boom", "x", 500)),
]

# -- round trips -------------------------------------------------------------------------------------


@CODECS
@given(completion=completions())
def test_body_round_trip(name: str, completion: Completion) -> None:
    """The body gives back what the wire carries; for a completion with an error, that is the error alone
    where a body cannot carry both (`ERROR_BODY_ALONE`)."""
    codec = CHAT_CODECS[name]
    shown = codec.visible(completion)
    if completion.error is not None and name in ERROR_BODY_ALONE:
        shown = Completion(stop_reason=None, error=shown.error)
    assert codec.decode_response(codec.encode_response(completion)) == shown


@CODECS
@given(completion=completions(), delta_chars=st.integers(1, 50), cuts=st.lists(st.integers(0, 10**6), max_size=20))
def test_stream_round_trip_any_deltas_any_split(
    name: str, completion: Completion, delta_chars: int, cuts: list[int]
) -> None:
    codec = CHAT_CODECS[name]
    shown = codec.visible(completion)
    assert codec.visible(shown) == shown
    wire = b"".join(codec.encode_stream(completion, delta_chars=delta_chars))
    assert codec.decode_stream(splits(wire, cuts)) == shown


@CODECS
@given(
    completion=st.sampled_from(SAMPLES),
    own=st.none() | st.text(CHARACTERS, min_size=1, max_size=20),
    asked=st.text(CHARACTERS, min_size=1, max_size=20),
)
def test_the_request_model_fills_a_missing_one(name: str, completion: Completion, own: str | None, asked: str) -> None:
    codec = CHAT_CODECS[name]
    completion = replace(completion, model=own)
    request = {"model": asked}
    body = codec.decode_response(codec.encode_response(replace(completion, error=None), request))
    stream = codec.decode_stream(codec.encode_stream(completion, request))
    assert body.model == stream.model == (None if name in MODEL_NOT_ON_WIRE else own or asked)


@CODECS
@given(kind=st.sampled_from(ErrorKind), message=texts, retry_after=st.none() | st.floats(0, 10**6))
def test_error_replies_round_trip(name: str, kind: ErrorKind, message: str, retry_after: float | None) -> None:
    codec = CHAT_CODECS[name]
    reply = codec.encode_error(kind, message, retry_after=retry_after)
    error = codec.decode_error(reply.status, reply.body)
    assert (error.kind, error.message, error.status) == (kind, message, reply.status)


# -- the real documents the fuzz tests start from ------------------------------------------------------


class Raw(str):
    """A stream event whose data is not JSON (Chat Completions' `[DONE]`)."""

    __slots__ = ()


def _package(codec: ChatCodec) -> str:
    return codec.decode_request.__module__.rpartition(".")[0]


def _requests(name: str, *, captured: bool) -> list[Any]:
    """The codec's request fixtures (tests/fixtures/requests/<package>/), or the CLI requests captured for it."""
    if captured:
        captures = [json.loads(path.read_bytes()) for path in sorted((FIXTURES / "captured").glob("*.json"))]
        return [capture["body"] for capture in captures if CAPTURED_BY[capture["cli"]] == name]
    folder = FIXTURES / "requests" / REQUEST_FIXTURES.get(name, _package(CHAT_CODECS[name]).rpartition(".")[2])
    documents = [json.loads(path.read_bytes()) for path in sorted(folder.glob("*.json"))]
    assert documents, f"no request fixtures for {name} in {folder}"
    return documents


def _json_or_raw(data: str) -> Any:
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        return Raw(data)


def _events(codec: ChatCodec, completion: Completion, delta_chars: int = 16) -> list[Any]:
    """A completion's stream as its events' payloads: JSON values, or `Raw` text. An event-stream message is
    an object of its headers (names start with ':') and its `payload`."""
    wire = codec.encode_stream(completion, delta_chars=delta_chars)
    if framing(codec.stream_media_type) is Framing.LINES:
        return ndjson.decode_all(wire)
    if codec.stream_media_type == eventstream.MEDIA_TYPE:
        return [
            {**{h.name: h.value for h in m.headers}, "payload": _json_or_raw(m.payload.decode())}
            for m in eventstream.decode_all(wire)
        ]
    return [_json_or_raw(event.data) for event in decode_all(wire)]


def _frame(codec: ChatCodec, payload: Any) -> bytes:
    """One event as the codec's framing carries it: an NDJSON line, an event-stream message (string headers,
    other values as their JSON text), or an SSE event named after its type as Anthropic and Responses name
    theirs (decoders read the type)."""
    if framing(codec.stream_media_type) is Framing.LINES:
        return dump(payload) + b"\n"
    if codec.stream_media_type == eventstream.MEDIA_TYPE:
        document = payload if isinstance(payload, dict) else {"payload": payload}
        headers = {k: v if isinstance(v, str) else dump(v).decode() for k, v in document.items() if k != "payload"}
        body = document.get("payload")
        raw = body.encode() if isinstance(body, Raw) else b"" if body is None else dump(body)
        return eventstream.encode_event(headers, raw)
    if isinstance(payload, Raw):
        return encode_event(payload)
    kind = payload.get("type") if isinstance(payload, dict) else None
    named = isinstance(kind, str) and "\n" not in kind and "\r" not in kind
    return encode_event(dump(payload).decode(), kind if named else None)


REQUESTS = {name: _requests(name, captured=False) for name in CHAT_CODECS}
CAPTURED = {name: _requests(name, captured=True) for name in CHAT_CODECS}
BODIES = {name: [json.loads(codec.encode_response(c)) for c in SAMPLES] for name, codec in CHAT_CODECS.items()}
STREAMS = {name: [_events(codec, c) for c in SAMPLES] for name, codec in CHAT_CODECS.items()}
EVENTS = {name: [event for stream in STREAMS[name] for event in stream] for name in CHAT_CODECS}
WORDS = {
    name: words_in([*REQUESTS[name], *BODIES[name], *EVENTS[name]])
    | words_of(_package(codec))
    | words_of("llmproxy.providers")
    for name, codec in CHAT_CODECS.items()
}
FUZZ = {name: fuzz_values(WORDS[name]) for name in CHAT_CODECS}
EVENT_KEYS = {name: sorted({key for e in EVENTS[name] if isinstance(e, dict) for key in e}) for name in CHAT_CODECS}
EVENT_TYPES = {
    name: sorted(
        {e["type"] for e in EVENTS[name] if isinstance(e, dict) and isinstance(e.get("type"), str)}
        | set(DECODER_ONLY_EVENT_TYPES.get(name, ()))
    )
    for name in CHAT_CODECS
}
DECODERS: dict[str, Callable[[ChatCodec, Any], object]] = {
    "request": lambda codec, document: codec.decode_request(dump(document)),
    "body": lambda codec, document: codec.decode_response(dump(document)),
    "stream": lambda codec, events: codec.decode_stream([_frame(codec, e) for e in events]),
}


def only_parse_errors(decode: Callable[..., object], *args: Any) -> None:
    with contextlib.suppress(ParseError):
        decode(*args)


# -- robustness --------------------------------------------------------------------------------------


@CODECS
@given(raw=st.binary(max_size=300), status=st.integers(0, 999))
def test_arbitrary_bytes_raise_only_parse_error(name: str, raw: bytes, status: int) -> None:
    codec = CHAT_CODECS[name]
    only_parse_errors(codec.decode_request, raw)
    only_parse_errors(codec.decode_response, raw)
    only_parse_errors(codec.decode_stream, [raw])
    only_parse_errors(codec.decode_stream, [b"data: " + raw + b"\n\n"])
    assert isinstance(codec.decode_error(status, raw), ProviderError)


@CODECS
@given(data=st.data(), status=st.integers(0, 999))
def test_arbitrary_json_raises_only_parse_error(name: str, data: st.DataObject, status: int) -> None:
    codec = CHAT_CODECS[name]
    value = data.draw(FUZZ[name])
    for kind, decode in DECODERS.items():
        only_parse_errors(decode, codec, [value] if kind == "stream" else value)
    assert isinstance(codec.decode_error(status, dump(value)), ProviderError)


@CODECS
@pytest.mark.parametrize("kind", list(DECODERS))
def test_every_single_edit_of_a_real_document_raises_only_parse_error(name: str, kind: str) -> None:
    """Each value of each request fixture, sample body and sample stream (whole events included) removed,
    then retyped, one at a time. (Captured CLI requests are too big for this; they are fuzzed below.)"""
    codec = CHAT_CODECS[name]
    documents = {"request": REQUESTS, "body": BODIES, "stream": STREAMS}[kind][name]
    for index, document in enumerate(documents):
        for path, edited in every_edit(document):
            try:
                DECODERS[kind](codec, edited)
            except ParseError:
                pass
            except Exception as exc:
                exc.add_note(f"{kind} #{index} edited at {path}: {dump(edited)[:2000]!r}")
                raise


@CODECS
@given(data=st.data())
def test_corrupted_real_requests_raise_only_parse_error(name: str, data: st.DataObject) -> None:
    """Request fixtures and captured CLI requests with a few values replaced or removed anywhere."""
    request = data.draw(st.sampled_from(REQUESTS[name] + CAPTURED[name]).flatmap(lambda r: mutated(r, FUZZ[name])))
    only_parse_errors(CHAT_CODECS[name].decode_request, dump(request))


@CODECS
@given(data=st.data(), completion=completions(), delta_chars=st.integers(1, 24))
def test_corrupted_real_bodies_and_streams_raise_only_parse_error(
    name: str, data: st.DataObject, completion: Completion, delta_chars: int
) -> None:
    """Any completion's body and stream (or a sample's body) with a few values replaced or removed anywhere,
    whole events included."""
    codec = CHAT_CODECS[name]
    body = data.draw(st.sampled_from([*BODIES[name], json.loads(codec.encode_response(completion))]))
    only_parse_errors(DECODERS["body"], codec, data.draw(mutated(body, FUZZ[name])))
    events = _events(codec, completion, delta_chars)
    only_parse_errors(DECODERS["stream"], codec, data.draw(mutated(events, FUZZ[name])))


@st.composite
def _made_up_event(draw: st.DrawFn, name: str) -> Any:
    """An event with the codec's own top-level keys (and a type, if its events have one) holding any JSON."""
    event = draw(st.dictionaries(st.sampled_from(EVENT_KEYS[name]), FUZZ[name], max_size=3))
    if EVENT_TYPES[name]:
        event["type"] = draw(st.sampled_from(EVENT_TYPES[name]))
    return event


@CODECS
@given(data=st.data(), trailer=st.binary(max_size=20))
def test_arbitrary_event_sequences_raise_only_parse_error(name: str, data: st.DataObject, trailer: bytes) -> None:
    """The codec's real events in any order and number, some corrupted, some made up, then a cut event."""
    real = st.sampled_from(EVENTS[name])
    event = real | real.flatmap(lambda e: mutated(e, FUZZ[name], at_most=1)) | _made_up_event(name)
    events = data.draw(st.lists(event, max_size=8))
    codec = CHAT_CODECS[name]
    only_parse_errors(codec.decode_stream, [*(_frame(codec, e) for e in events), trailer])


# -- turn counting without a decode -------------------------------------------------------------------


def agrees_with_the_decode(codec: ChatCodec, document: Any) -> None:
    """`assistant_turns` gives what the decode gives for a body that decodes, and never raises; the body
    decodes the same, or fails with the same message, from its bytes and from its JSON parsed by the caller."""
    body = dump(document)
    parsed = orjson.loads(body)
    counted = codec.assistant_turns(parsed)
    outcomes = [_decoded(codec, body), _decoded(codec, Parsed(parsed))]
    assert outcomes[0] == outcomes[1], body[:2000]
    assert isinstance(counted, int)
    if isinstance(outcomes[0], Conversation):
        assert counted == outcomes[0].assistant_turns, body[:2000]


def _decoded(codec: ChatCodec, body: bytes | Parsed) -> Conversation | str:
    """The conversation, or the `ParseError`'s message."""
    try:
        return codec.decode_request(body)
    except ParseError as error:
        return str(error)


def holds_for_real_requests_and_every_edit(name: str, holds: Callable[[ChatCodec, Any], None]) -> None:
    """`holds` for each real and captured request of codec `name`, and each single edit of the real ones."""
    codec = CHAT_CODECS[name]
    for document in REQUESTS[name] + CAPTURED[name]:
        holds(codec, document)
    for document in REQUESTS[name]:
        for _path, edited in every_edit(document):
            holds(codec, edited)


def holds_for_corrupted_or_arbitrary_requests(
    name: str, data: st.DataObject, holds: Callable[[ChatCodec, Any], None]
) -> None:
    """`holds` for a real or captured request of codec `name` corrupted, and for an arbitrary one."""
    request = data.draw(st.sampled_from(REQUESTS[name] + CAPTURED[name]).flatmap(lambda r: mutated(r, FUZZ[name])))
    holds(CHAT_CODECS[name], request)
    holds(CHAT_CODECS[name], data.draw(FUZZ[name]))


@CODECS
def test_assistant_turns_of_real_requests_and_every_edit_agree_with_the_decode(name: str) -> None:
    holds_for_real_requests_and_every_edit(name, agrees_with_the_decode)


@CODECS
@given(data=st.data())
def test_assistant_turns_of_corrupted_or_arbitrary_requests_agree_with_the_decode(
    name: str, data: st.DataObject
) -> None:
    holds_for_corrupted_or_arbitrary_requests(name, data, agrees_with_the_decode)


# -- the latest message read alone ------------------------------------------------------------------------


def latest_agrees_with_the_decode(codec: ChatCodec, document: Any) -> None:
    """`latest_message` gives the decode's latest message, but for the names of its tool results (only the
    whole history names them), for a body that decodes; on anything else it returns or raises `ParseError`."""
    assert codec.latest_message is not None
    body = dump(document)
    parsed = orjson.loads(body)
    decoded = _decoded(codec, Parsed(parsed))
    try:
        latest = codec.latest_message(parsed)
    except ParseError:
        assert not isinstance(decoded, Conversation), body[:2000]
        return
    if isinstance(decoded, Conversation):
        assert _nameless(latest) == _nameless(decoded.latest), body[:2000]


def _nameless(message: Message | None) -> Message | None:
    """The message with its tool results unnamed: the wire may send only the call's id."""
    if message is None:
        return None
    parts = (replace(part, name=None) if isinstance(part, ToolResultPart) else part for part in message.parts)
    return Message(message.role, tuple(parts))


READ_ALONE = pytest.mark.parametrize("name", [name for name, codec in CHAT_CODECS.items() if codec.latest_message])


@READ_ALONE
def test_the_latest_message_of_real_requests_and_every_edit_is_the_decodes(name: str) -> None:
    holds_for_real_requests_and_every_edit(name, latest_agrees_with_the_decode)


@READ_ALONE
@given(data=st.data())
def test_the_latest_message_of_corrupted_or_arbitrary_requests_is_the_decodes(name: str, data: st.DataObject) -> None:
    holds_for_corrupted_or_arbitrary_requests(name, data, latest_agrees_with_the_decode)


# -- the answer read for the gates alone --------------------------------------------------------------------


def answer_agrees_with_the_decode(codec: ChatCodec, document: Any) -> None:
    """`read_answer` gives the decode's usage and tool calls, or that it is an error, for a body that decodes,
    and redacted: each tool call as decoding the body redacted whole gives it. On anything else it returns or
    raises `ParseError`. Asked for the usage alone (no `shown`), it gives the decode's usage; and so does
    `read_usage`, where the codec has one, which raises where that reading raises and gives None for an error."""
    assert codec.read_answer is not None
    parsed = orjson.loads(dump(document))
    if codec.read_usage is not None:
        try:
            alone = codec.read_answer(parsed, None)
        except ParseError:
            with pytest.raises(ParseError):
                codec.read_usage(parsed)
        else:
            assert codec.read_usage(parsed) == (None if alone.error else alone.usage), document
    for shown in (lambda value: value, REDACTOR.json, None):
        try:
            decoded: Completion | None = codec.decode_response(Parsed(shown(parsed) if shown else parsed))
        except ParseError:
            decoded = None
        try:
            answer = codec.read_answer(parsed, shown)
        except ParseError:
            assert decoded is None, document
            continue
        if decoded is not None:
            assert answer.error is (decoded.error is not None), document
            if not answer.error and shown is None:  # the usage alone
                assert (answer.usage, answer.tool_calls) == (decoded.usage, ()), document
            elif not answer.error:
                assert (answer.usage, answer.tool_calls) == (decoded.usage, decoded.tool_calls), document


KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8" * 3
SECRET_CALLS = replace(
    CASES["parallel_tools"],
    tool_calls=(
        ToolCall("call_key", "login", {"user": "ada", "password": KEY, "token": 7}),
        ToolCall("call_note", "note", {"text": f"the key is {KEY}", KEY: [KEY]}),
    ),
)
READ_ANSWER = pytest.mark.parametrize("name", [name for name, codec in CHAT_CODECS.items() if codec.read_answer])


@READ_ANSWER
def test_the_answer_read_alone_of_every_sample_and_every_edit_is_the_decodes(name: str) -> None:
    codec = CHAT_CODECS[name]
    for document in [*BODIES[name], json.loads(codec.encode_response(SECRET_CALLS))]:
        answer_agrees_with_the_decode(codec, document)
        for _path, edited in every_edit(document):
            answer_agrees_with_the_decode(codec, edited)


@READ_ANSWER
@given(completion=completions(), data=st.data())
def test_the_answer_read_alone_of_any_or_corrupted_answers_is_the_decodes(
    name: str, completion: Completion, data: st.DataObject
) -> None:
    codec = CHAT_CODECS[name]
    body = json.loads(codec.encode_response(completion))
    answer_agrees_with_the_decode(codec, body)
    answer_agrees_with_the_decode(codec, data.draw(mutated(body, FUZZ[name])))
    answer_agrees_with_the_decode(codec, data.draw(FUZZ[name]))
