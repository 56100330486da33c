import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from llmproxy.cassette.bodies import body_bytes, event_bytes, store_body
from llmproxy.cassette.model import (
    Base64Body,
    Base64Event,
    Event,
    JsonBody,
    JsonLineEvent,
    SseEvent,
    TextBody,
    TextEvent,
)
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_redact import store_events
from llmproxy.model.exchange import RawEvent
from tests.cassette.factory import ANTHROPIC_KEY, eventstream_message

REDACTOR = Redactor()


def store_event(event: RawEvent, content_type: str, redactor: Redactor) -> Event:
    (stored,) = store_events([event], content_type, redactor)
    return stored


TYPES = ["text/event-stream", "application/x-ndjson", "application/vnd.amazon.eventstream", "text/plain"]


def test_bodies_by_content() -> None:
    assert store_body(b'{"b": 1, "a": [true]}', "application/json", REDACTOR, expect_json=False) == (
        JsonBody(json={"b": 1, "a": [True]}),
        None,
    )
    assert store_body(b"hello", "text/plain", REDACTOR, expect_json=False) == (TextBody(text="hello"), None)
    assert store_body(b"<html>", "text/html", REDACTOR, expect_json=True) == (
        TextBody(text="<html>"),
        "is 'text/html', not the JSON the API speaks: stored verbatim",
    )
    assert store_body(b"\xff\x00", "image/png", REDACTOR, expect_json=False) == (Base64Body(base64="/wA="), None)


def test_invalid_json_is_stored_verbatim_with_a_note() -> None:
    body, note = store_body(b'{"cut', None, REDACTOR, expect_json=True)
    assert body == TextBody(text='{"cut')
    assert note is not None
    assert note.startswith("not valid JSON")


def test_events_are_readable_only_when_exact() -> None:
    def stored(data: bytes, content_type: str = "text/event-stream") -> object:
        return store_event(RawEvent(1.23456, data), content_type, REDACTOR)

    assert stored(b'event: ping\ndata: {"type":"ping"}\n\n') == SseEvent(
        t_ms=1.235, event="ping", data={"type": "ping"}
    )
    assert stored(b'data: {"a":1}\n\n') == SseEvent(t_ms=1.235, data={"a": 1})
    assert stored(b'data: {"a": 1}\n\n') == TextEvent(t_ms=1.235, text='data: {"a": 1}\n\n')
    assert stored(b'data: {"a":1}\r\n\r\n') == TextEvent(t_ms=1.235, text='data: {"a":1}\r\n\r\n')
    assert stored(b"data: [DONE]\n\n") == TextEvent(t_ms=1.235, text="data: [DONE]\n\n")
    assert stored(b'{"done":true}\n', "application/x-ndjson") == JsonLineEvent(t_ms=1.235, json={"done": True})
    message = eventstream_message(b"{}")
    assert stored(message, "application/vnd.amazon.eventstream") == Base64Event(
        t_ms=1.235, base64=__import__("base64").b64encode(message).decode()
    )


def test_keys_in_events_are_redacted() -> None:
    event = store_event(
        RawEvent(0, b'data: {"text":"' + ANTHROPIC_KEY.encode() + b'"}\n\n'), "text/event-stream", REDACTOR
    )
    assert isinstance(event, SseEvent)
    assert event.data["text"].startswith("<redacted:sk-ant:")


@settings(max_examples=100)
@given(data=st.binary(max_size=200), content_type=st.sampled_from(TYPES))
def test_any_event_converts_back_to_its_redacted_bytes(data: bytes, content_type: str) -> None:
    event = store_event(RawEvent(0.5, data), content_type, REDACTOR)
    assert event_bytes(event) == REDACTOR.data(data)


@settings(max_examples=100)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
        max_leaves=12,
    ),
    name=st.none() | st.text(alphabet="abc_", min_size=1, max_size=8),
    ndjson=st.booleans(),
)
def test_json_events_round_trip_exactly(value: object, name: str | None, ndjson: bool) -> None:
    if ndjson:
        data, content_type = orjson.dumps(value) + b"\n", "application/x-ndjson"
    else:
        head = f"event: {name}\n".encode() if name else b""
        data, content_type = head + b"data: " + orjson.dumps([value]) + b"\n\n", "text/event-stream"
    event = store_event(RawEvent(0, data), content_type, REDACTOR)
    assert event_bytes(event) == data


@settings(max_examples=100)
@given(data=st.binary(max_size=200), content_type=st.sampled_from(["application/json", "text/plain", None]))
def test_any_body_is_stored_and_converts_back(data: bytes, content_type: str | None) -> None:
    body, _ = store_body(data, content_type, REDACTOR, expect_json=True)
    back = body_bytes(body)
    if isinstance(body, JsonBody):
        assert orjson.loads(back) == orjson.loads(data)
    else:
        assert back == REDACTOR.data(data)
