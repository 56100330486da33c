"""Exchanges of WebSocket messages in a cassette: stored message by message, connections told apart, and
matched read whole — Codex CLI's session as it really sent it (tests/fixtures/captured)."""

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from llmproxy.cassette.bodies import event_bytes, is_binary_message
from llmproxy.cassette.convert import to_request
from llmproxy.cassette.model import Base64Event, Exchange, MessageEvent, TextEvent
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import ReplayHit, ReplayIndex, ReplayMiss
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.cassette.websocket import answer_events
from llmproxy.model import Completion, StopReason, ToolCall
from llmproxy.model.exchange import RawEvent, RawExchange, RawRequest, RawResponse
from llmproxy.providers.openai_responses.stream import stream_events
from tests.cassette.factory import STARTED, request

CAPTURED = Path(__file__).parents[1] / "fixtures" / "captured"
KEY = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF" * 2
UPGRADE_HEADERS = (
    ("host", "api.openai.com"),
    ("upgrade", "websocket"),
    ("connection", "Upgrade"),
    ("authorization", f"Bearer {KEY}"),
    ("user-agent", "codex_exec/0.169.0 (Debian 12.0.0; x86_64) unknown (codex_exec; 0.169.0)"),
)
TURNS = [
    Completion(
        text="Running it.",
        tool_calls=(ToolCall("call_capture_1", "exec_command", {"cmd": "echo llmproxy-ok"}),),
        stop_reason=StopReason.TOOL_USE,
    ),
    Completion(text="The command printed llmproxy-ok.", stop_reason=StopReason.END_TURN),
]


def captured(number: int) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((CAPTURED / f"codex-websocket-0.169.0-message{number}.json").read_text())["body"]
    return body


def upgrade(body: Any) -> RawRequest:
    return request(
        body, method="GET", scheme="wss", host="api.openai.com", path="/v1/responses", headers=UPGRADE_HEADERS
    )


def on_socket(body: Any, events: list[bytes], connection: int, binary: tuple[int, ...] = ()) -> RawExchange:
    messages = tuple(RawEvent(10.0 * (i + 1), data, i in binary) for i, data in enumerate(events))
    answer = RawResponse(101, "Switching Protocols", "HTTP/1.1", (("upgrade", "websocket"),), None, messages, None)
    return RawExchange(upgrade(body), answer, None, STARTED, 10.0, 10.0 * len(events), websocket=connection)


def codex_session(connection: int = 7) -> list[RawExchange]:
    """Codex's warm-up, first turn and tool output on one connection, answered with ids the messages name."""
    warmup, first, second = captured(1), captured(2), captured(3)
    answers = [
        Completion(id=first["previous_response_id"], stop_reason=StopReason.END_TURN),
        replace(TURNS[0], id=second["previous_response_id"]),
        TURNS[1],
    ]
    return [
        on_socket(body, [orjson.dumps(event) for event in stream_events(completion, body)], connection)
        for body, completion in zip((warmup, first, second), answers, strict=True)
    ]


def record(path: Path, *exchanges: RawExchange) -> str:
    writer = CassetteWriter.open(path, Redactor())
    for item in exchanges:
        writer.add(item)
    return str(writer.close())


def test_messages_are_stored_one_event_each_and_give_back_their_bytes(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    events = [
        b'{"type":"response.created","response":{"id":"resp_1"}}',
        b'{"type": "spaced", "key": "' + KEY.encode() + b'"}',  # not compact: kept as text, key redacted
        b"\x00\x01binary",
        b'{"type":"response.completed","response":{"id":"resp_1","output":[]}}',
    ]
    body = {"type": "response.create", "model": "gpt-6", "input": []}
    summary = record(path, on_socket(body, events, 3, binary=(2,)), on_socket(body, events[:1], 3))
    assert "over WebSocket" in summary
    text = path.read_text()
    assert KEY not in text
    first, second = load_cassette(path).exchanges
    assert first.websocket is not None
    assert second.websocket is not None
    assert first.websocket.connection == second.websocket.connection == first.id
    assert (first.provider, first.operation, first.model, first.streaming) == ("openai", "responses", "gpt-6", True)
    assert first.request.url == "wss://api.openai.com/v1/responses"
    assert first.response is not None
    assert first.response.events is not None
    kinds = [type(event) for event in first.response.events]
    assert kinds == [MessageEvent, TextEvent, Base64Event, MessageEvent]
    assert [is_binary_message(event) for event in first.response.events] == [False, False, True, False]
    replayed = [event_bytes(event) for event in first.response.events]
    assert replayed[0] == events[0]
    assert replayed[2:] == events[2:]
    assert b"<redacted:" in replayed[1]
    assert [event.t_ms for event in first.response.events] == [10.0, 20.0, 30.0, 40.0]
    assert '"websocket": {\n        "connection": 1\n      }' in text  # beside the exchange's other headlines


def test_connections_keep_their_first_exchange_id_when_interleaved(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    body = {"type": "response.create", "model": "m", "input": []}
    one = [b'{"type":"response.completed","response":{"id":"r"}}']
    record(path, on_socket(body, one, 1), on_socket(body, one, 2), on_socket(body, one, 1))
    record(path, on_socket(body, one, 1))  # a later recording: a connection of its own
    connections = [e.websocket.connection for e in load_cassette(path).exchanges if e.websocket]
    assert connections == [1, 2, 1, 4]


def index_of(tmp_path: Path, exchanges: list[RawExchange]) -> tuple[ReplayIndex, list[Exchange]]:
    record(tmp_path / "c.json", *exchanges)
    loaded = load_cassette(tmp_path / "c.json").exchanges
    return ReplayIndex(loaded), loaded


def live(body: Any) -> Any:
    request, route = to_request(upgrade(body), Redactor())
    return request, route.provider.value if route else None


def test_a_request_sent_whole_matches_the_recording_sent_in_part(tmp_path: Path) -> None:
    """Codex sent its tool output incrementally when recording; sent whole (as after a reconnection, or by
    another client) it is the same request, and replay serves the same answer."""
    index, loaded = index_of(tmp_path, codex_session())
    warmup, first, second = captured(1), captured(2), captured(3)
    assert isinstance(index.take(*live({k: v for k, v in warmup.items() if k != "type"})), ReplayHit)
    first_whole = {k: v for k, v in first.items() if k not in ("type", "previous_response_id")}
    assert isinstance(index.take(*live(first_whole)), ReplayHit)
    output = [e["item"] for e in answer_events(loaded[1]) if e["type"] == "response.output_item.done"]
    whole = {k: v for k, v in second.items() if k not in ("type", "previous_response_id")}
    hit = index.take(*live({**whole, "input": [*first["input"], *output, *second["input"]]}))
    assert isinstance(hit, ReplayHit)
    assert hit.exchange.id == 3


def test_a_changed_message_misses_with_the_path_that_differs(tmp_path: Path) -> None:
    index, _ = index_of(tmp_path, codex_session())
    first = {k: v for k, v in captured(2).items() if k not in ("type", "previous_response_id")}
    changed = json.loads(json.dumps(first).replace("Run `echo llmproxy-ok`", "Run `echo other`"))
    miss = index.take(*live(changed))
    assert isinstance(miss, ReplayMiss)
    assert miss.closest is not None
    assert miss.closest.id == 2
    assert miss.differences[0].path.startswith("$.input[6].content[0].text")
