from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest
from click.testing import CliRunner

from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.model import Cassette, header_pairs
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.cli import main
from llmproxy.mock.from_cassette import convert, dumps, to_expectations
from llmproxy.mock.spec import Conversation, ErrorReply, ExpectationsFile, Match, Respond, ToolCall, Turn, Usage
from llmproxy.model import Completion, StopReason
from llmproxy.model.exchange import RawEvent, RawExchange, RawResponse
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect
from tests.cassette.factory import exchange, request, response

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = [ROOT / "cassettes" / "quickstart.json", ROOT / "cassettes" / "claude-code-tool-loop.json"]


def recorded_completions(cassette: Cassette) -> list[Completion]:
    """What each recorded chat response decodes to, in file order."""
    completions = []
    for recorded in cassette.exchanges:
        url = urlsplit(recorded.request.url)
        headers = dict(header_pairs(recorded.request.headers))
        route = detect(url.hostname or "", url.path, headers, method=recorded.request.method)
        codec = chat_codec(route) if route else None
        if codec is None or recorded.response is None:
            continue
        if recorded.response.events is not None:
            completions.append(codec.decode_stream(event_bytes(event) for event in recorded.response.events))
        else:
            assert recorded.response.body is not None
            completions.append(codec.decode_response(body_bytes(recorded.response.body)))
    return completions


def turns(expectations: ExpectationsFile) -> list[Turn]:
    return [
        turn
        for entry in expectations.expectations
        if isinstance(entry, Conversation)
        for turn in entry.conversation.turns
    ]


@pytest.mark.parametrize("path", COMMITTED, ids=lambda path: path.name)
def test_a_committed_cassette_answers_each_chat_exchange_as_recorded(path: Path) -> None:
    cassette = load_cassette(path)
    expectations = to_expectations(cassette)
    assert ExpectationsFile.model_validate(orjson.loads(dumps(expectations))) == expectations
    assert dumps(to_expectations(load_cassette(path))) == dumps(expectations)
    completions = recorded_completions(cassette)
    answered = turns(expectations)
    assert len(answered) == len(completions) > 0
    for turn, completion in zip(answered, completions, strict=True):
        assert turn.respond is not None
        assert (turn.respond.text or "") == completion.text
        calls = [(call.id, call.name, call.arguments) for call in turn.respond.toolCalls]
        assert calls == [(call.id, call.name, call.arguments) for call in completion.tool_calls]


def test_the_claude_code_loop_is_one_conversation_matched_by_turn_and_tool_result() -> None:
    conversion = convert(load_cassette(ROOT / "cassettes" / "claude-code-tool-loop.json"))
    (entry,) = conversion.expectations.expectations
    assert isinstance(entry, Conversation)
    assert entry.conversation.match == Match(provider="anthropic", path="/v1/messages", model="claude-opus-5-5")
    first, second = entry.conversation.turns
    assert first.match == Match(turnIndex=0)  # the latest message is Claude Code's system reminder
    assert first.respond == Respond(
        text="Running it.",
        toolCalls=(
            ToolCall(
                name="Bash",
                arguments={"command": "echo llmproxy-ok", "description": "Print a marker"},
                id="call_capture_1",
            ),
        ),
        # as recorded: the first turn writes Claude Code's prompt to the cache, Anthropic's input is the rest
        usage=Usage(inputTokens=4, outputTokens=20, cacheCreationTokens=11_926),
    )
    assert second.match == Match(turnIndex=1, containsToolResultFor="Bash")
    assert second.respond is not None
    assert second.respond.text == "The command printed llmproxy-ok."
    assert conversion.skipped == {"not a chat API": 2}  # Claude Code's policy and settings lookups


def user(text: str) -> dict[str, object]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def body(*messages: dict[str, object], model: str = "claude-x") -> dict[str, object]:
    return {"model": model, "max_tokens": 512, "messages": list(messages)}


def answer(*content: dict[str, object], stop: str = "end_turn", **usage: int) -> bytes:
    counts = {"input_tokens": 10, "output_tokens": 5, **usage}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "content": list(content)}
    return orjson.dumps({**message, "stop_reason": stop, "stop_sequence": None, "usage": counts})


def rate_limited() -> RawResponse:
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests exceeded"}}
    headers = (("content-type", "application/json"), ("retry-after", "2"))
    return RawResponse(429, "Too Many Requests", "HTTP/1.1", headers, orjson.dumps(error), None, None)


def overloaded_stream() -> RawResponse:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    events = (RawEvent(1.0, b"event: error\ndata: " + orjson.dumps(error) + b"\n\n"),)
    headers = (("content-type", "text/event-stream"),)
    return RawResponse(200, "OK", "HTTP/1.1", headers, None, events, None)


def hand_built(path: Path) -> Path:
    question = user(
        "  Plan   the refactor of the billing module, step by step, keeping every public API unchanged please"
    )
    call = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "billing.py"}}
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "def bill(): ..."}],
    }
    called = {"role": "assistant", "content": [call]}
    thinking = {"type": "thinking", "thinking": "Split it in two.", "signature": "sig-1"}
    exchanges: list[RawExchange] = [
        exchange(request(body(question)), response(answer(call, stop="tool_use", cache_read_input_tokens=100))),
        exchange(request(body(question, called, result)), rate_limited()),
        exchange(
            request(body(user("Title this chat"), model="claude-small")),
            response(answer({"type": "text", "text": "Billing"})),
        ),
        exchange(
            request(body(question, called, result)), response(answer(thinking, {"type": "text", "text": "Done."}))
        ),
        exchange(
            request({"model": "voyage-3", "input": ["a"]}, host="api.voyageai.com", path="/v1/embeddings"), response()
        ),
        exchange(request(body(user('{"task": "again"}'))), None, "connection refused"),
        exchange(request(body(user('{"task": "again"}'))), overloaded_stream()),
        exchange(request(body(user("Again"))), response(b"not json")),
    ]
    writer = CassetteWriter.open(path, Redactor(), keep_unanswered=True)  # as --record-unanswered keeps an outage
    for item in exchanges:
        writer.add(item)
    writer.close()
    return path


def test_a_hand_built_session_gives_error_turns_separate_sessions_and_mapped_usage(tmp_path: Path) -> None:
    conversion = convert(load_cassette(hand_built(tmp_path / "c.json")))
    main_session, side, again = conversion.expectations.expectations
    assert isinstance(main_session, Conversation)
    assert isinstance(side, Conversation)
    assert isinstance(again, Conversation)
    assert side.conversation.match == Match(provider="anthropic", path="/v1/messages", model="claude-small")
    assert side.conversation.turns[0].match == Match(turnIndex=0, latestMessageContains="Title this chat")

    asked, limited, retried = main_session.conversation.turns
    assert asked.match == Match(
        turnIndex=0, latestMessageContains="Plan the refactor of the billing module, step by step,"
    )
    assert asked.respond == Respond(
        toolCalls=(ToolCall(name="read_file", arguments={"path": "billing.py"}, id="toolu_1"),),
        usage=Usage(inputTokens=10, outputTokens=5, cachedInputTokens=100),  # uncached input, as recorded
    )
    assert limited.match == Match(turnIndex=1, containsToolResultFor="read_file")
    assert limited.error == ErrorReply(status=429, message="Number of requests exceeded", retryAfter=2.0)
    assert retried.match == limited.match  # the retry continues the session
    assert retried.respond == Respond(
        text="Done.",
        reasoningText="Split it in two.",
        reasoningSignature="sig-1",
        usage=Usage(inputTokens=10, outputTokens=5),
    )

    (failed,) = again.conversation.turns  # turn 0 again after an answered turn 1: a new session
    assert failed.match == Match(turnIndex=0)  # a JSON prompt is compared with sorted keys: no excerpt
    assert failed.error == ErrorReply(status=529, message="Overloaded")  # failed in the stream, before content
    assert conversion.skipped == {"not a chat API": 1, "no response": 1, "undecodable": 1}
    assert conversion.report("out.json") == (
        "wrote 3 conversations, 5 turns to out.json; skipped 3 exchanges: 1 no response, 1 not a chat API, "
        "1 undecodable"
    )


def test_the_command_writes_the_file_or_stdout_and_reports_on_stderr(tmp_path: Path) -> None:
    cassette = str(ROOT / "cassettes" / "claude-code-tool-loop.json")
    out = tmp_path / "expectations.json"
    written = CliRunner().invoke(main, ["cassette", "to-expectations", cassette, "-o", str(out)])
    assert written.exit_code == 0, written.output
    assert written.stdout == ""
    assert written.stderr == f"wrote 1 conversation, 2 turns to {out}; skipped 2 exchanges: 2 not a chat API\n"
    text = out.read_text()
    assert text.startswith('{\n  "expectations": [\n')
    assert "null" not in text
    assert '"priority"' not in text
    assert len(turns(ExpectationsFile.model_validate_json(text))) == 2

    printed = CliRunner().invoke(main, ["cassette", "to-expectations", cassette])
    assert printed.exit_code == 0
    assert printed.stdout == text
    assert printed.stderr.startswith("wrote 1 conversation, 2 turns to stdout;")


def test_the_command_says_why_a_cassette_cannot_be_read(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"exchanges": []}')
    for path in (bad, tmp_path / "missing.json"):
        result = CliRunner().invoke(main, ["cassette", "to-expectations", str(path)])
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr.startswith(f"{path}: ")


def test_stop_reasons_other_than_the_default_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor())
    text = {"type": "text", "text": "Cut"}
    writer.add(exchange(request(body(user("Write a long essay"))), response(answer(text, stop="max_tokens"))))
    writer.close()
    (turn,) = turns(to_expectations(load_cassette(path)))
    assert turn.respond is not None
    assert turn.respond.stopReason is StopReason.MAX_TOKENS


def test_openai_usage_is_kept_as_the_wire_counts_it_and_odd_arguments_stay_text(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{not json"}}
    choice = {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]}}
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "prompt_tokens_details": {"cached_tokens": 40},
        "completion_tokens_details": {"reasoning_tokens": 5},
    }
    answer = {
        "id": "c1",
        "object": "chat.completion",
        "model": "gpt-x",
        "choices": [{**choice, "finish_reason": "tool_calls"}],
    }
    asked = {"model": "gpt-x", "messages": [{"role": "user", "content": "Look it up"}]}
    path = tmp_path / "c.json"
    writer = CassetteWriter.open(path, Redactor())
    writer.add(
        exchange(
            request(asked, host="api.openai.com", path="/v1/chat/completions"),
            response(orjson.dumps({**answer, "usage": usage})),
        )
    )
    writer.close()
    (entry,) = to_expectations(load_cassette(path)).expectations
    assert isinstance(entry, Conversation)
    assert entry.conversation.match == Match(provider="openai", path="/v1/chat/completions", model="gpt-x")
    (turn,) = entry.conversation.turns
    assert turn.respond == Respond(
        toolCalls=(ToolCall(name="lookup", arguments="{not json", id="call_1"),),
        usage=Usage(inputTokens=100, outputTokens=20, cachedInputTokens=40, reasoningTokens=5),  # prompt_tokens
    )
