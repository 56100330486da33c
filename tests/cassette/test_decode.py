"""`decode_exchange`: a recorded exchange of every chat API read back as its conversation, completion and usage,
through the cassette as it is written and loaded."""

from pathlib import Path

import pytest

from llmproxy.cassette.decode import decode_exchange
from llmproxy.cassette.files import read_exchanges
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.errors import UnsupportedError
from llmproxy.model import ErrorKind, Route
from llmproxy.model.exchange import RawEvent, RawRequest, RawResponse
from llmproxy.providers.registry import chat_codec, error_encoder
from llmproxy.providers.routes import detect, with_body
from tests.cassette.factory import exchange, request
from tests.cassette.test_websocket import TURNS, codex_session
from tests.golden.cases import CASES
from tests.samples import CHAT, VECTORS, Sample

COMPLETION = CASES["tool_call"]


def route_of(sample: Sample) -> Route:
    route = detect(sample.host, sample.path, {}, method="POST")
    assert route is not None
    return with_body(route, sample.body)


def raw(sample: Sample) -> RawRequest:
    return request(sample.data, host=sample.host, path=sample.path, headers=(("content-type", "application/json"),))


def recorded(tmp_path: Path, request: RawRequest, response: RawResponse | None) -> Exchange:
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor(), keep_unanswered=True)  # a recorded outage decodes too
    writer.add(exchange(request, response, None if response else "connection refused"))
    writer.close()
    (only,) = load_cassette(path).exchanges
    return only


@pytest.mark.parametrize("sample", CHAT, ids=lambda sample: sample.name)
def test_every_chat_api_decodes_to_what_was_sent_and_answered(tmp_path: Path, sample: Sample) -> None:
    route = route_of(sample)
    codec = chat_codec(route)
    assert codec is not None
    if route.streaming:
        events = tuple(RawEvent(10.0 * i, data) for i, data in enumerate(codec.encode_stream(COMPLETION, sample.body)))
        headers = (("content-type", codec.stream_media_type),)
        response = RawResponse(200, "OK", "HTTP/1.1", headers, None, events, None)
    else:
        body = codec.encode_response(COMPLETION, sample.body)
        response = RawResponse(200, "OK", "HTTP/1.1", (("content-type", "application/json"),), body, None, None)
    conversation, completion, usage = decode_exchange(recorded(tmp_path, raw(sample), response))
    assert conversation == codec.decode_request(sample.data)
    assert completion == codec.visible(COMPLETION)
    assert usage == completion.usage
    assert usage is not None
    assert usage.output_tokens == COMPLETION.usage.output_tokens  # type: ignore[union-attr]


def test_an_error_answer_is_a_completion_with_only_the_providers_error(tmp_path: Path) -> None:
    sample = CHAT[0]
    error = error_encoder(route_of(sample))(ErrorKind.RATE_LIMIT, "slow down", retry_after=3)
    response = RawResponse(429, "Too Many Requests", "HTTP/1.1", tuple(error.headers.items()), error.body, None, None)
    _, completion, usage = decode_exchange(recorded(tmp_path, raw(sample), response))
    assert completion is not None
    assert completion.error is not None
    assert (completion.error.kind, completion.error.message, completion.error.status) == (
        ErrorKind.RATE_LIMIT,
        "slow down",
        429,
    )
    assert (completion.text, completion.tool_calls, usage) == ("", (), None)


def test_an_exchange_the_upstream_never_answered_has_no_completion(tmp_path: Path) -> None:
    conversation, completion, usage = decode_exchange(recorded(tmp_path, raw(CHAT[0]), None))
    assert conversation.latest is not None
    assert (completion, usage) == (None, None)


@pytest.mark.parametrize("sample", VECTORS[:1], ids=lambda sample: sample.name)
def test_what_is_not_a_chat_exchange_says_so(tmp_path: Path, sample: Sample) -> None:
    response = RawResponse(200, "OK", "HTTP/1.1", (), b'{"data": []}', None, None)
    with pytest.raises(UnsupportedError, match=r"exchange 1 is not a chat exchange \(openai embeddings\)"):
        decode_exchange(recorded(tmp_path, raw(sample), response))


def test_a_websocket_exchange_decodes_from_its_messages(tmp_path: Path) -> None:
    """Codex's turns over a WebSocket: the `response.create` message, and the events that answered it."""
    path = tmp_path / "ws.json"
    writer = CassetteWriter.open(path, Redactor())
    for item in codex_session():
        writer.add(item)
    writer.close()
    decoded = [decode_exchange(exchange) for exchange in load_cassette(path).exchanges]
    assert [completion.text for _, completion, _ in decoded if completion is not None] == [
        "",
        TURNS[0].text,
        TURNS[1].text,
    ]
    _, tool_turn, _ = decoded[1]
    assert tool_turn is not None
    assert [call.name for call in tool_turn.tool_calls] == ["exec_command"]
    assert decoded[2][0].latest is not None  # the tool output it brings back


def test_a_request_stored_with_a_shared_history_decodes_as_stored(tmp_path: Path) -> None:
    """The second turn re-sends the first's messages: the cassette stores them once, and `decode_exchange`
    reads the stored tail (a report decodes each message once); inflated, it reads the whole history."""
    path = tmp_path / "c.json"
    first = [{"role": "user", "content": "Fix the bug."}]
    second = [*first, {"role": "assistant", "content": "Which bug?"}, {"role": "user", "content": "The retry."}]
    writer = CassetteWriter.open(path, Redactor(), keep_unanswered=True)
    for messages in (first, second):
        body = {"model": "claude-haiku-4-5", "max_tokens": 64, "messages": messages}
        writer.add(exchange(request(body), None, "connection refused"))
    writer.close()
    stored = read_exchanges(path)[1]
    assert stored.request.extends is not None
    assert stored.request.extends.items == 1
    assert [m.text for m in decode_exchange(stored).conversation.messages] == ["Which bug?", "The retry."]
    inflated = load_cassette(path).exchanges[1]
    assert [m.text for m in decode_exchange(inflated).conversation.messages] == [
        "Fix the bug.",
        "Which bug?",
        "The retry.",
    ]
