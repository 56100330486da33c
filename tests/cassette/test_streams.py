"""A stream's events stored compactly: timings in one column, runs of like events as their varying values, and
every reader still sees the events as they were sent."""

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from llmproxy.cassette.bodies import event_bytes
from llmproxy.cassette.files import read_exchanges
from llmproxy.cassette.model import dump
from llmproxy.cassette.store import compact_cassette, load_cassette
from llmproxy.cassette.streams import compact_stream, expand_stream
from llmproxy.cli import main
from llmproxy.errors import CassetteError
from llmproxy.model.exchange import RawEvent, RawExchange
from tests.cassette.factory import ANTHROPIC_KEY, exchange, request, response
from tests.cassette.test_parts import record

ROOT = Path(__file__).resolve().parents[2]
TEXT = "I read the failing test and renamed the helper it calls. " * 4


def sse(*events: tuple[str, dict[str, object]], start: float = 100.0) -> tuple[RawEvent, ...]:
    return tuple(
        RawEvent(start + 1.5 * n, f"event: {name}\ndata: ".encode() + orjson.dumps(data) + b"\n\n")
        for n, (name, data) in enumerate(events)
    )


def deltas(text: str, index: int = 0) -> list[tuple[str, dict[str, object]]]:
    return [
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text[i : i + 40]}},
        )
        for i in range(0, len(text), 40)
    ]


def answer(text: str = TEXT, start: float = 100.0) -> RawExchange:
    """An Anthropic stream: its text in 40-character deltas, with a ping among them."""
    pieces = deltas(text)
    events = sse(
        ("message_start", {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        *pieces[:2],
        ("ping", {"type": "ping"}),
        *pieces[2:],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_stop", {"type": "message_stop"}),
        start=start,
    )
    body = {"model": "claude-x", "messages": [{"role": "user", "content": "fix it"}], "stream": True}
    return exchange(request(body), response(events=events, content_type="text/event-stream"))


def test_a_stream_stores_its_timings_in_one_line_and_each_delta_as_its_text(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorded = answer()
    record(path, recorded)
    stream = orjson.loads(path.read_bytes())["exchanges"][0]["response"]["stream"]
    assert stream["t_ms"] == [event.t_ms for event in recorded.response.events]  # type: ignore[union-attr]
    assert stream["events"][2]["vary"] == ["data.delta.text"]
    assert stream["events"][3] == [TEXT[40:80]]  # the delta after the first, as its text alone
    assert stream["events"][4] == {"event": "ping", "data": {"type": "ping"}}  # not in the run, which goes on
    assert stream["events"][5] == [TEXT[80:120]]
    lines = path.read_text().splitlines()
    assert sum(line.strip().startswith('"t_ms"') for line in lines) == 1
    assert f'["{TEXT[40:80]}"]' in {line.strip().rstrip(",") for line in lines}  # one line an event
    loaded = load_cassette(path).exchanges[0].response
    assert loaded is not None
    assert loaded.events is not None
    assert [event.t_ms for event in loaded.events] == stream["t_ms"]
    assert b"".join(event_bytes(event) for event in loaded.events) == b"".join(
        event.data
        for event in recorded.response.events  # type: ignore[union-attr]
    )


def test_a_cassette_with_events_reads_the_same_and_compacts_into_streams(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, answer(), answer(TEXT[::-1], start=7.25))
    plain = tmp_path / "plain.json"
    stored = [dump(e) for e in read_exchanges(path)]
    plain.write_bytes(orjson.dumps({"llmproxy_cassette": 1, "exchanges": stored}, option=orjson.OPT_INDENT_2))
    assert b'"t_ms": [' not in plain.read_bytes()
    assert load_cassette(plain) == load_cassette(path)
    compact_cassette(plain)
    assert plain.read_bytes() == path.read_bytes()


def test_a_secret_split_across_a_runs_values_is_redacted_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, answer("Use the key " + ANTHROPIC_KEY + " for staging, then run the tests again. " * 3))
    text = path.read_text()
    assert ANTHROPIC_KEY[:20] not in text
    assert "<redacted:sk-ant:" in text
    assert CliRunner().invoke(main, ["cassette", "check", str(path)]).exit_code == 0
    at = text.rindex("<redacted:sk-ant:")  # in the stream, after the request's header
    leaked = text[:at] + ANTHROPIC_KEY + text[at + len("<redacted:sk-ant:12345678>") :]
    path.write_text(leaked)
    result = CliRunner().invoke(main, ["cassette", "check", str(path)])
    assert result.exit_code == 1, result.output
    assert ".response.stream.events[" in result.output


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda s: {**s, "t_ms": s["t_ms"][1:]}, "$.response.stream: expected as many times as events"),
        (
            lambda s: {**s, "events": [[s["events"][3][0]], *s["events"][1:]]},
            "$.response.stream.events[0]: 1 values, no run before it",
        ),
        (
            lambda s: {
                **s,
                "events": [*s["events"][:2], {**s["events"][2], "vary": ["data.delta.words"]}, *s["events"][3:]],
            },
            "$.response.stream.events[2]: no value at 'data.delta.words'",
        ),
    ],
    ids=["times", "no run", "no such path"],
)
def test_a_stream_that_does_not_say_its_events_is_one_line_naming_the_exchange(
    edit: object, said: str, tmp_path: Path
) -> None:
    path = tmp_path / "c.json"
    record(path, answer())
    data = orjson.loads(path.read_bytes())
    response = data["exchanges"][0]["response"]
    response["stream"] = edit(response["stream"])  # type: ignore[operator]
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert str(caught.value) == f"{path}: exchange 1: {said}"
    result = CliRunner().invoke(main, ["cassette", "check", str(path)])
    assert result.exit_code == 2
    assert "exchange 1: " in result.output


def test_the_documented_stream_reads_as_its_events_and_is_what_the_recorder_writes() -> None:
    text = (ROOT / "docs" / "cassette-format.md").read_text()
    section = text[text.index("### How the file stores a stream") :]
    example = orjson.loads("{" + section[section.index("```json") + 7 : section.index("```\n")] + "}")["stream"]
    events = expand_stream(example)
    assert [event["t_ms"] for event in events] == example["t_ms"]
    assert [event["data"].get("delta", {}).get("text") for event in events] == [
        None,
        "The tests",
        " pass",
        None,
        " now.",
    ]
    assert events[2] == {
        **events[1],
        "t_ms": 418.9,
        "data": {**events[1]["data"], "delta": {"type": "text_delta", "text": " pass"}},
    }
    assert compact_stream(events) == example
