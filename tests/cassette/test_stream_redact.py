"""A secret a model streams is split across events: redaction joins the pieces first
(docs/security.md#what-is-redacted).

Every provider's streaming shape, split at any points: no piece of the secret survives in any event, the
stored stream still decodes with the provider's own codec, and it reassembles to the redacted text.
"""

import base64
import itertools

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmproxy.cassette.bodies import event_bytes
from llmproxy.cassette.model import Event
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_redact import store_events
from llmproxy.model.exchange import RawEvent
from llmproxy.providers.registry import CHAT_CODECS
from tests.secret_corpus import CONTEXTS, SHAPES
from tests.streams import STREAMS, sse

REDACTOR = Redactor()


class ScanningEverything(Redactor):
    """The redactor, but its keyword pass finds one keyword over all it is given (and past either end): the
    stream is then redacted without that pass sparing any event, every event handed to the redactor."""

    def keywords(self, data: bytes) -> list[tuple[int, int]]:
        return [(-1, len(data) + 1)]


PLANTED = sorted({*SHAPES.values(), *(text for text, _ in CONTEXTS.values())})
SECRETS = sorted({*SHAPES.values(), *(secret for _, secret in CONTEXTS.values())})


def split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)] or [""]


def stored(name: str, pieces: list[str]) -> tuple[list[Event], str]:
    build, content_type, codec = STREAMS[name]
    events = store_events([RawEvent(i, data) for i, data in enumerate(build(pieces))], content_type, REDACTOR)
    completion = CHAT_CODECS[codec].decode_stream(event_bytes(event) for event in events)
    return events, completion.text


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(STREAMS)),
    secret=st.sampled_from(PLANTED),
    before=st.text(alphabet="abc .,\n", max_size=20),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_a_secret_split_at_any_points_never_survives(name: str, secret: str, before: str, cuts: list[int]) -> None:
    text = f"{before} {secret} and more"
    events, reassembled = stored(name, split(text, cuts))
    dumped = orjson.dumps([event.model_dump(by_alias=True) for event in events]).decode()
    secrets_in = [s for s in SECRETS if s in text]
    assert all(s not in dumped and s not in reassembled for s in secrets_in)
    assert all(s not in event_bytes(e).decode("latin-1") for s in secrets_in for e in events)
    assert reassembled == REDACTOR.text(text)


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_every_event_holding_a_piece_changes_and_one_holds_the_placeholder(name: str) -> None:
    key = SHAPES["sk-ant"]
    pieces = ["My key is ", key[:14], key[14:30], key[30:], " — keep it."]
    events, reassembled = stored(name, pieces)
    placeholder = REDACTOR.text(key)
    assert reassembled == f"My key is {placeholder} — keep it."
    texts = [event_bytes(event) for event in events]
    with_placeholder = [
        i for i, data in enumerate(texts) if placeholder.encode() in data or _in_chunk(data, placeholder)
    ]
    assert with_placeholder  # the delta where it starts (and, in Responses, the events that repeat the text)
    assert all(key[:14].encode() not in data and key[30:].encode() not in data for data in texts)
    assert all(key[14:30] not in data.decode("latin-1") for data in texts)


def _in_chunk(data: bytes, text: str) -> bool:
    """Whether a Bedrock chunk's base64 JSON holds the text."""
    start = data.find(b'{"bytes":"')
    if start < 0:
        return False
    chunk = orjson.loads(data[start : data.rfind(b"}") + 1])["bytes"]
    return text in base64.b64decode(chunk).decode()


def test_tool_arguments_and_thinking_are_joined_per_block() -> None:
    password = "s3cr" + "et-Passw0rd-xyz"
    arguments = f'{{"user": "admin", "password": "{password}"}}'

    def block(index: int, kind: str, field: str, text: str) -> list[bytes]:
        return [
            sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: p}},
            )
            for p in split(text, [7, 19, 30, 33])
        ]

    key = SHAPES["github"]
    events = [
        *block(0, "thinking_delta", "thinking", f"the user pasted {key} earlier"),
        *block(1, "input_json_delta", "partial_json", arguments),
    ]
    stored_events = store_events([RawEvent(0, e) for e in events], "text/event-stream", REDACTOR)
    dumped = b"".join(event_bytes(e) for e in stored_events)
    for fragment in (key[:10], key[-10:], password[:6], password[-6:]):
        assert fragment.encode() not in dumped
    joined = "".join(
        orjson.loads(event_bytes(e).split(b"data: ")[1])["delta"]["partial_json"] for e in stored_events[-5:]
    )
    assert orjson.loads(joined)["password"].startswith("<redacted:password:")


def test_a_chat_tool_call_split_across_chunks_is_redacted_per_call() -> None:
    key = SHAPES["stripe"]
    arguments = orjson.dumps({"api": key}).decode()

    def chunk(index: int, piece: str) -> bytes:
        call = {"index": index, "function": {"arguments": piece}}
        return sse(None, {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})

    pieces = split(arguments, [3, 12, 20, 41])
    events = [chunk(0, p) for p in pieces] + [chunk(1, p) for p in pieces]
    stored_events = store_events([RawEvent(0, e) for e in events], "text/event-stream", REDACTOR)
    completion = CHAT_CODECS["openai-chat"].decode_stream(event_bytes(e) for e in stored_events)
    assert [call.arguments for call in completion.tool_calls] == [{"api": REDACTOR.text(key)}] * 2


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(sorted(STREAMS)),
    texts=st.lists(st.sampled_from([*PLANTED, "plain words", "a token of thanks", "asked", "https://x.y"]), max_size=4),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    extra=st.sampled_from([None, *PLANTED[:6]]),
    at=st.integers(0, 40),
    spaced=st.booleans(),
)
def test_events_the_keyword_pass_skips_are_stored_as_the_redactor_stores_them(
    name: str, texts: list[str], cuts: list[int], extra: str | None, at: int, spaced: bool
) -> None:
    """The one keyword pass over all the events (which spares the redactor the events without a keyword)
    stores every stream exactly as handing every event to the redactor does: secrets and keywords in the
    streamed text, whole in an event of their own (an SSE event's name and data, a verbatim line), anywhere."""
    build, content_type, _ = STREAMS[name]
    wire = build(split(" ".join(texts), cuts))
    if extra is not None:
        inserted = sse(extra, {"type": "ping", "note": extra}, spaced=spaced)
        wire.insert(at % (len(wire) + 1), inserted)
    events = [RawEvent(i, data) for i, data in enumerate(wire)]
    every_event = store_events(events, content_type, ScanningEverything())
    assert store_events(events, content_type, REDACTOR) == every_event
