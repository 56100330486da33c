"""Shared parts: what requests repeat is stored once per cassette, and every reader still sees whole exchanges."""

import shutil
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from llmproxy.cassette import parts
from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.files import journal_path, read_exchanges, read_stored
from llmproxy.cassette.model import JsonBody, dump
from llmproxy.cassette.parts import PARTS, RecentIds, part_id
from llmproxy.cassette.recorded import load_recorded
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.replay_index import ReplayHit, ReplayIndex, ReplayMiss
from llmproxy.cassette.store import CassetteWriter, compact_cassette, load_cassette
from llmproxy.cli import main
from llmproxy.errors import CassetteError
from llmproxy.model.exchange import RawEvent, RawExchange, RawResponse
from tests.cassette.factory import ANTHROPIC_KEY, exchange, request, response, sse_events

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(
    path for path in (ROOT / "cassettes").rglob("*.json") if path.read_bytes().startswith(b'{\n  "llmproxy_cassette"')
)
SYSTEM = "You are a careful coding agent. " + " ".join(f"Rule {n}: say what you did." for n in range(40))
TOOLS = [
    {"name": f"tool_{n}", "description": f"Tool number {n}. " * 20, "input_schema": {"type": "object"}}
    for n in range(6)
]


def turn(number: int, tools: list[dict[str, object]] = TOOLS, system: str = SYSTEM, t_ms: float = 1.0) -> RawExchange:
    """One call of an agent session: the same system prompt and tools, one more user message each turn."""
    messages = [{"role": "user", "content": f"step {n}"} for n in range(number + 1)]
    body = {"model": "claude-x", "system": system, "tools": tools, "messages": messages, "stream": True}
    events = sse_events({"type": "content_block_delta", "text": f"done {number}"}, {"type": "message_stop"})
    events = tuple(replace(event, t_ms=event.t_ms + t_ms) for event in events)
    return exchange(request(body), response(events=events, content_type="text/event-stream"))


def list_id(tools: list[dict[str, object]]) -> str:
    """A tool list's part id: the hash of its references, as written (each names its tool's content)."""
    return part_id(orjson.dumps([{"$part": part_id(orjson.dumps(tool))} for tool in tools]))


def record(path: Path, *exchanges: RawExchange) -> None:
    writer = CassetteWriter.open(path, Redactor())
    writer.start()
    for item in exchanges:
        writer.add(item)
    writer.close()


def stored(path: Path) -> list[dict[str, object]]:
    return list(orjson.loads(path.read_bytes())["exchanges"])


def test_a_session_stores_its_system_prompt_and_each_tool_once(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, *(turn(n) for n in range(3)))
    text = path.read_text()
    assert text.count("Rule 39: say") == 1
    assert all(text.count(f"Tool number {n}. ") == 20 for n in range(6))  # one copy of each description
    first, second, third = stored(path)
    assert len(first[PARTS]) == 8  # the system prompt, each tool, and the tool list
    assert second[PARTS] == third[PARTS] == {}
    body = first["request"]["body"]["json"]  # type: ignore[index]
    assert body["system"] == {"$part": part_id(orjson.dumps(SYSTEM))}
    assert body["tools"] == {"$part": list_id(TOOLS)}
    assert first[PARTS][list_id(TOOLS)] == [{"$part": part_id(orjson.dumps(t))} for t in TOOLS]  # type: ignore[index]
    # readers see every request whole
    for number, loaded in enumerate(load_cassette(path).exchanges):
        assert isinstance(loaded.request.body, JsonBody)
        assert loaded.request.body.json_["system"] == SYSTEM
        assert loaded.request.body.json_["tools"] == TOOLS
        assert len(loaded.request.body.json_["messages"]) == number + 1


def test_a_tool_list_changed_by_one_tool_stores_one_new_tool(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    changed = [*TOOLS[:3], {**TOOLS[3], "description": "Another tool entirely. " * 20}, *TOOLS[4:]]
    record(path, turn(0), turn(1, tools=changed))
    second = stored(path)[1]
    # the new tool, and the new list, which refers to the tools the first list has too
    assert list(second[PARTS]) == [part_id(orjson.dumps(changed[3])), list_id(changed)]  # type: ignore[call-overload]


def test_appending_a_turn_leaves_every_earlier_line_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, turn(0), turn(1))
    before = path.read_bytes()
    record(path, turn(2, tools=[*TOOLS, {"name": "new", "description": "A new tool. " * 30}]))
    after = path.read_bytes()
    kept = before.removesuffix(b"\n  ]\n}\n")
    assert after.startswith(kept + b",\n")
    assert after.count(b"A new tool. ") == 30  # the new tool is the only new part, in the new exchange
    assert [e.id for e in load_cassette(path).exchanges] == [1, 2, 3]


def test_recording_the_same_session_again_changes_only_timing_lines(tmp_path: Path) -> None:
    first, again = tmp_path / "a.json", tmp_path / "b.json"
    record(first, *(turn(n) for n in range(3)))
    record(again, *(turn(n, t_ms=7.25) for n in range(3)))
    one, other = first.read_text().splitlines(), again.read_text().splitlines()
    assert len(one) == len(other)
    differing = [b for a, b in zip(one, other, strict=True) if a != b]
    assert differing
    assert all(line.strip().startswith('"t_ms"') for line in differing)


def test_ids_depend_on_content_not_on_order(tmp_path: Path) -> None:
    forward, backward = tmp_path / "f.json", tmp_path / "b.json"
    record(forward, turn(0), turn(1, tools=TOOLS[::-1]))
    record(backward, turn(0, tools=TOOLS[::-1]), turn(1))
    listed, reversed_ = list_id(TOOLS), list_id(TOOLS[::-1])  # two lists: two parts
    assert set(stored(forward)[0][PARTS]) - {listed} == set(stored(backward)[0][PARTS]) - {reversed_}  # type: ignore[arg-type]
    assert set(stored(forward)[1][PARTS]) == {reversed_}  # type: ignore[arg-type]


def test_a_secret_in_a_shared_part_is_redacted_once_and_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    system = SYSTEM + f" Use the key {ANTHROPIC_KEY} for the staging account."
    record(path, turn(0, system=system), turn(1, system=system))
    text = path.read_text()
    assert ANTHROPIC_KEY not in text
    assert text.count("<redacted:sk-ant:") == 3  # the part, and each request's x-api-key header
    for loaded in load_cassette(path).exchanges:
        assert isinstance(loaded.request.body, JsonBody)
        assert "<redacted:sk-ant:" in loaded.request.body.json_["system"]
    result = CliRunner().invoke(main, ["cassette", "check", str(path)])
    assert result.exit_code == 0, result.output


def test_a_request_that_sends_a_part_object_itself_is_stored_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    body = {"model": "claude-x", "system": SYSTEM, "metadata": {"$part": "0123456789ab"}, "messages": []}
    record(path, exchange(request(body), response()))
    (only,) = stored(path)
    assert PARTS not in only
    loaded = load_cassette(path).exchanges[0].request.body
    assert isinstance(loaded, JsonBody)
    assert loaded.json_ == body


def test_a_large_value_an_answer_repeats_is_stored_once(tmp_path: Path) -> None:
    """The Responses API echoes its request's tools in three events of each answer."""
    path = tmp_path / "c.json"
    echoed = {"id": "resp_1", "status": "in_progress", "tools": TOOLS, "instructions": SYSTEM}
    events = sse_events(
        {"type": "response.created", "response": echoed},
        {"type": "response.in_progress", "response": echoed},
        {"type": "response.completed", "response": {**echoed, "status": "completed"}},
        event=None,
    )
    body = {"model": "gpt-x", "instructions": SYSTEM, "tools": TOOLS, "input": [], "stream": True}
    answer = response(events=events, content_type="text/event-stream")
    raw = exchange(request(body, host="api.openai.com", path="/v1/responses"), answer)
    record(path, raw)
    text = path.read_text()
    assert text.count("Rule 39: say") == 1
    assert text.count("Tool number 5. ") == 20
    loaded = load_cassette(path).exchanges[0]
    assert loaded.response is not None
    assert loaded.response.events is not None
    assert [event.data for event in loaded.response.events] == [  # type: ignore[union-attr]
        {"type": "response.created", "response": echoed},
        {"type": "response.in_progress", "response": echoed},
        {"type": "response.completed", "response": {**echoed, "status": "completed"}},
    ]


def write_plain(source: Path, path: Path) -> Path:
    """`source` written as llmproxy wrote cassettes before shared parts: every value in place."""
    stored = [dump(exchange) for exchange in read_exchanges(source)]
    path.write_bytes(orjson.dumps({"llmproxy_cassette": 1, "exchanges": stored}, option=orjson.OPT_INDENT_2))
    return path


def replayed(path: Path) -> list[object]:
    """What replay answers each recorded HTTP request of a cassette with, in order."""
    index = ReplayIndex(load_recorded(path))
    answers = []
    for recorded in list(index.recorded):
        if recorded.websocket is None:
            hit = index.take(recorded.request, recorded.provider)
            assert isinstance(hit, ReplayHit)
            answers.append(hit)
    return answers


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: str(path.relative_to(ROOT / "cassettes")))
def test_a_committed_cassette_is_compact_and_reads_as_it_did_whole(path: Path, tmp_path: Path) -> None:
    """Each committed cassette, written as before parts (every value in place), reads, replays and answers the
    same as the committed file; compacting that gives back the committed file byte for byte."""
    plain = write_plain(path, tmp_path / path.name)
    assert load_cassette(plain) == load_cassette(path)
    assert list(load_recorded(plain)) == list(load_recorded(path))
    assert read_stored(plain) == read_stored(path)  # histories still shared as they were
    assert replayed(plain) == replayed(path)
    compact_cassette(plain)
    assert plain.read_bytes() == path.read_bytes()
    assert compact_cassette(plain)[1] == path.stat().st_size  # compacting again changes nothing


def test_a_missing_part_is_one_line_naming_the_exchange_and_the_part(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, turn(0), turn(1))
    ident = part_id(orjson.dumps(SYSTEM))
    data = orjson.loads(path.read_bytes())
    del data["exchanges"][0][PARTS][ident]
    path.write_bytes(orjson.dumps(data))
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert str(caught.value) == f"{path}: exchange 1: part {ident} is not introduced by it or an earlier exchange"
    result = CliRunner().invoke(main, ["cassette", "check", str(path)])
    assert result.exit_code == 2
    assert f"exchange 1: part {ident} is not introduced by it or an earlier exchange" in result.output


def test_a_part_whose_content_is_not_its_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, turn(0), turn(1))
    ident = part_id(orjson.dumps(SYSTEM))
    text = path.read_text().replace(SYSTEM[:40], "You are a careless coding agent. ", 1)
    path.write_text(text)
    with pytest.raises(CassetteError, match=f"^{path}: exchange 1: part {ident} does not match its content"):
        load_cassette(path)
    with pytest.raises(CassetteError, match=f"exchange 1: part {ident} does not match"):
        load_recorded(path)


def test_a_journal_refers_to_its_cassettes_parts(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, turn(0))
    writer = CassetteWriter.open(path, Redactor())
    writer.start()
    writer.write(turn(1))  # journalled; the recorder is then killed before closing
    journal = journal_path(path).read_bytes()
    writer._journal.release(remove=False)
    writer._pending.abort()
    assert b"Rule 39: say" not in journal.splitlines()[1]  # the part is the cassette's
    loaded = load_cassette(path).exchanges
    assert [e.id for e in loaded] == [1, 2]
    assert isinstance(loaded[1].request.body, JsonBody)
    assert loaded[1].request.body.json_["system"] == SYSTEM
    result = CliRunner().invoke(main, ["cassette", "check", str(journal_path(path))])
    assert result.exit_code == 0, result.output


def test_the_compact_command_rewrites_each_file_and_says_so(tmp_path: Path) -> None:
    copy = write_plain(ROOT / "cassettes" / "claude-code-tool-loop.json", tmp_path / "c.json")
    before = copy.stat().st_size
    runner = CliRunner()
    result = runner.invoke(main, ["cassette", "compact", str(copy), str(tmp_path / "missing.json")])
    assert result.exit_code == 2
    size = copy.stat().st_size
    assert f"{copy}: {before:,} → {size:,} bytes" in result.output
    assert f"cannot compact: {tmp_path / 'missing.json'}: no such cassette" in result.output
    assert not journal_path(copy).exists()
    again = runner.invoke(main, ["cassette", "compact", str(copy)])
    assert again.exit_code == 0
    assert again.output == f"{copy}: {size:,} bytes, already compact\n"


def test_the_compact_command_leaves_a_cassette_with_a_leftover_journal_alone(tmp_path: Path) -> None:
    copy = tmp_path / "c.json"
    shutil.copy(ROOT / "cassettes" / "opencode-tool-loop.json", copy)
    before = copy.read_bytes()
    journal_path(copy).write_bytes(b'{"llmproxy_journal": 1, "owner": "pid 1: gone"}\n')
    result = CliRunner().invoke(main, ["cassette", "compact", str(copy)])
    assert result.exit_code == 2
    assert "a recording that died left c.json.journal: record or replay it first" in result.output
    assert copy.read_bytes() == before
    assert journal_path(copy).exists()


def test_the_documented_example_reads_as_a_whole_request(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "cassette-format.md").read_text()
    section = text[text.index("## Shared parts") :]
    example = orjson.loads(section[section.index("```json") + 7 : section.index("```\n")])
    path = tmp_path / "c.json"
    path.write_bytes(orjson.dumps({"llmproxy_cassette": 1, "exchanges": [example]}, option=orjson.OPT_INDENT_2))
    body = load_cassette(path).exchanges[0].request.body
    assert isinstance(body, JsonBody)
    assert body.json_["system"] == example[PARTS]["99188f61ea11"]
    assert body.json_["tools"] == [example[PARTS]["c4539f5a92b7"]]


def test_a_miss_on_a_compacted_cassette_names_the_shared_part_by_its_request_path(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    record(path, turn(0), turn(1))
    index = ReplayIndex(load_recorded(path))
    recorded = load_cassette(path).exchanges[1].request
    assert isinstance(recorded.body, JsonBody)
    tools = [*TOOLS[:3], {**TOOLS[3], "description": "changed"}, *TOOLS[4:]]
    sent = recorded.model_copy(update={"body": JsonBody(json={**recorded.body.json_, "tools": tools})})
    miss = index.take(sent, "anthropic")
    assert isinstance(miss, ReplayMiss)
    assert [difference.path for difference in miss.differences] == ["$.tools[3].description"]
    assert isinstance(index.take(recorded, "anthropic"), ReplayHit)


@pytest.mark.parametrize(
    "command", [["report", "--format", "json"], ["explain"], ["cassette", "to-expectations"]], ids=" ".join
)
def test_reports_and_conversions_of_a_compacted_cassette_are_the_same(command: list[str], tmp_path: Path) -> None:
    source = ROOT / "cassettes" / "claude-code-tool-loop.json"
    before, after = tmp_path / "before" / "c.json", tmp_path / "after" / "c.json"
    for path in (before, after):
        path.parent.mkdir()
        write_plain(source, path)
    compact_cassette(after)
    assert after.stat().st_size < before.stat().st_size / 2
    runner = CliRunner()
    said = [runner.invoke(main, [*command, str(path)]) for path in (before, after)]
    assert said[0].exit_code == said[1].exit_code == 0
    assert said[0].stdout.replace(str(before), str(after)) == said[1].stdout


GOLDEN = sorted(path for path in (ROOT / "tests" / "golden").iterdir() if path.is_dir() and path.name != "report")
STREAM_TYPES = {
    ".sse": "text/event-stream",
    ".ndjson": "application/x-ndjson",
    ".eventstream": "application/vnd.amazon.eventstream",
}


@pytest.mark.parametrize("folder", GOLDEN, ids=lambda path: path.name)
def test_golden_answers_recorded_twice_read_back_as_they_were_sent(folder: Path, tmp_path: Path) -> None:
    """Each golden answer of an API, after a request with shared instructions, twice: later exchanges refer to
    the first's parts; every answer reads back byte for byte, as the file without parts does."""
    goldens = sorted(path for path in folder.iterdir() if path.suffix in (".json", *STREAM_TYPES))
    recorded = []
    for number, golden in enumerate(goldens):
        data = golden.read_bytes()
        if golden.suffix == ".json":
            answer = response(data)
        else:
            chunks = tuple(RawEvent(float(n), data[n * 64 : (n + 1) * 64]) for n in range((len(data) + 63) // 64))
            answer = response(events=chunks, content_type=STREAM_TYPES[golden.suffix])
        recorded += [exchange(turn(number).request, answer), exchange(turn(number).request, answer)]
    path = tmp_path / "c.json"
    record(path, *recorded)
    plain = tmp_path / "plain.json"
    stored = [dump(e) for e in read_exchanges(path)]
    plain.write_bytes(orjson.dumps({"llmproxy_cassette": 1, "exchanges": stored}, option=orjson.OPT_INDENT_2))
    assert load_cassette(path) == load_cassette(plain)
    loaded = load_cassette(path).exchanges
    for position, golden in enumerate(goldens):
        data = golden.read_bytes()
        for answer in (loaded[2 * position].response, loaded[2 * position + 1].response):
            assert answer is not None
            if answer.events is None:
                assert answer.body is not None
                assert body_bytes(answer.body) == orjson.dumps(orjson.loads(data))  # replay's compact JSON
            else:
                assert b"".join(event_bytes(event) for event in answer.events) == data


ANSWER = "I read the failing test: " + " ".join(f"line {n} expects the old name." for n in range(30))
COMMAND = {"command": "pytest -q tests/ " + " ".join(f"--deselect tests/test_{n}.py" for n in range(12))}


def anthropic_answer() -> RawResponse:
    """A streamed Anthropic answer: a text block and a tool call, each in several deltas."""
    arguments = orjson.dumps(COMMAND).decode()
    events = sse_events(
        {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": [], "model": "x"}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ANSWER[i : i + 90]}}
            for i in range(0, len(ANSWER), 90)
        ),
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t1", "name": "Bash"}},
        *(
            {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": part}}
            for part in (arguments[:70], arguments[70:150], arguments[150:])
        ),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_stop"},
    )
    return response(events=events, content_type="text/event-stream")


def test_an_answer_sent_back_in_the_next_request_is_stored_once(tmp_path: Path) -> None:
    """The next call's history holds the answer's text and its tool call's input: both refer to the answer."""
    path = tmp_path / "c.json"
    first = turn(0)
    sent = orjson.loads(first.request.body)
    echoed = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": ANSWER},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": COMMAND},
        ],
    }
    again = {**sent, "messages": [*sent["messages"], echoed, {"role": "user", "content": "go on"}]}
    record(path, exchange(first.request, anthropic_answer()), exchange(request(again), response()))
    text = path.read_text()
    assert text.count("line 29 expects") == 1  # in the answer's stream, not again in the history
    assert text.count("--deselect tests/test_11.py") == 1
    second = stored(path)[1]
    text = (ROOT / "docs" / "cassette-format.md").read_text()
    section = text[text.index("* **What an answer gives back**") :]
    documented = section[section.index("```json") + 7 : section.index("```\n", section.index("```json"))]
    assert second[PARTS] == orjson.loads("{" + documented.strip().removeprefix('"parts": {'))  # the docs' example
    assert second[PARTS] == {  # type: ignore[comparison-overlap]
        part_id(orjson.dumps(ANSWER)): {
            "$answer": 1,
            "path": "delta.text",
            "when": {"type": "content_block_delta", "index": 0},
        },
        part_id(orjson.dumps(COMMAND)): {
            "$answer": 1,
            "path": "delta.partial_json",
            "when": {"type": "content_block_delta", "index": 1},
            "json": True,
        },
    }
    loaded = load_cassette(path).exchanges[1]
    assert isinstance(loaded.request.body, JsonBody)
    assert loaded.request.body.json_ == again
    assert read_stored(path)[1]["request"]["body"]["json"]["messages"] == [echoed, {"role": "user", "content": "go on"}]  # type: ignore[index]


def test_a_chat_completions_answer_sent_back_is_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    arguments = orjson.dumps(COMMAND).decode()
    chunks = [{"choices": [{"index": 0, "delta": {"content": ANSWER[i : i + 80]}}]} for i in range(0, len(ANSWER), 80)]
    chunks += [
        {
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": arguments[i : i + 60]}}]}}
            ]
        }
        for i in range(0, len(arguments), 60)
    ]
    answer = response(events=sse_events(*chunks, event=None), content_type="text/event-stream")
    chat = {"host": "api.openai.com", "path": "/v1/chat/completions"}
    asked = {"model": "gpt-x", "messages": [{"role": "user", "content": "fix it"}], "stream": True}
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    echoed = {"role": "assistant", "content": ANSWER, "tool_calls": [call]}
    again = {**asked, "messages": [*asked["messages"], echoed, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}
    record(path, exchange(request(asked, **chat), answer), exchange(request(again, **chat), response()))  # type: ignore[arg-type]
    text = path.read_text()
    assert text.count("line 29 expects") == 1
    assert text.count("test_11.py") == 1
    assert [place["path"] for place in stored(path)[1][PARTS].values()] == [  # type: ignore[attr-defined]
        "choices.0.delta.content",
        "choices.0.delta.tool_calls.0.function.arguments",
    ]
    loaded = load_cassette(path).exchanges[1]
    assert isinstance(loaded.request.body, JsonBody)
    assert loaded.request.body.json_ == again


def test_a_part_an_answer_no_longer_gives_is_refused(tmp_path: Path) -> None:
    """A hand edit of the answer a later request refers to: the reference is refused, naming the exchange and the
    part, and nothing is replayed from it."""
    path = tmp_path / "c.json"
    first = turn(0)
    sent = orjson.loads(first.request.body)
    again = {**sent, "messages": [*sent["messages"], {"role": "assistant", "content": ANSWER}]}
    record(path, exchange(first.request, anthropic_answer()), exchange(request(again), response()))
    ident = part_id(orjson.dumps(ANSWER))
    path.write_text(path.read_text().replace("line 3 expects", "line 3 wants", 1))
    said = f"exchange 2: part {ident} does not match what exchange 1's answer gives"
    with pytest.raises(CassetteError, match=f"^{path}: {said}"):
        load_cassette(path)
    with pytest.raises(CassetteError, match=said):
        load_recorded(path)
    result = CliRunner().invoke(main, ["cassette", "check", str(path)])
    assert result.exit_code == 2
    assert said in result.output


def test_an_answer_more_than_64_exchanges_back_is_stored_again(tmp_path: Path) -> None:
    """A reader keeps the answers of the 64 exchanges before the one it reads, not every one: an answer sent back
    later than that is stored again."""
    path = tmp_path / "c.json"
    sent = orjson.loads(turn(0).request.body)
    again = {**sent, "messages": [*sent["messages"], {"role": "assistant", "content": ANSWER}]}
    asked = [{"model": "x", "messages": [{"role": "user", "content": f"{n}"}]} for n in range(64)]
    fillers = [exchange(request(body), response()) for body in asked]
    record(path, exchange(turn(0).request, anthropic_answer()), *fillers, exchange(request(again), response()))
    late = stored(path)[65]
    assert late["id"] == 66
    assert all("$answer" not in str(value) for value in late[PARTS].values())  # type: ignore[attr-defined]
    assert path.read_text().count("line 29 expects") == 2
    assert load_cassette(path).exchanges[-1].request.body == JsonBody(json=again)


def test_a_value_met_again_while_recording_is_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole answer's text is counted in its exchange, read as what the answer gives when the next request
    comes, and sent back in that request's history: its part id is worked out once, and the cassette is the
    same."""
    hashed: list[bytes] = []

    def counted(encoded: bytes) -> str:
        hashed.append(encoded)
        return part_id(encoded)

    text = "The test at line 29 expects the old name; renaming it too. " * 40
    answer = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}
    first = {"model": "claude-x", "max_tokens": 64, "messages": [{"role": "user", "content": "rename"}]}
    again = {**first, "messages": [*first["messages"], {"role": "assistant", "content": text}]}
    exchanges = [exchange(request(first), response(orjson.dumps(answer))), exchange(request(again), response())]
    record(tmp_path / "plain.json", *exchanges)
    monkeypatch.setattr(parts, "part_id", counted)
    record(tmp_path / "counted.json", *exchanges)
    assert hashed.count(orjson.dumps(text)) == 1
    assert (tmp_path / "counted.json").read_bytes() == (tmp_path / "plain.json").read_bytes()


def test_recent_ids_are_part_ids_within_their_budget() -> None:
    ids = RecentIds(budget=1000)
    values = [orjson.dumps(f"value {n:03d} " * 30) for n in range(6)]  # all of one length, 360 bytes each
    for value in [*values, *values[::-1], *values]:
        assert ids(value) == part_id(value)
    assert ids(b"x" * 2000) == part_id(b"x" * 2000)  # larger than the budget: not kept, still right
