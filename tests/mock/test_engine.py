"""The mock engine on real provider request bodies: which expectation answers, in which order, with what
state, and how a miss explains itself."""

import threading
from typing import Any

import orjson
import pytest

from llmproxy.chain import Incoming
from llmproxy.mock import spec
from llmproxy.mock.engine import MockDecision, MockEngine, MockMiss
from tests.cassette.factory import request


def anthropic(messages: list[dict[str, Any]], *, session: str = "", model: str = "claude-haiku-4-5") -> Incoming:
    headers = [("content-type", "application/json"), ("anthropic-version", "2023-06-01")]
    if session:
        headers.append(("x-session", session))
    body = orjson.dumps({"model": model, "max_tokens": 100, "messages": messages})
    raw = request(body, headers=tuple(headers))
    return Incoming(raw)


def openai(messages: list[dict[str, Any]]) -> Incoming:
    body = orjson.dumps({"model": "gpt-5-mini", "messages": messages})
    raw = request(body, host="api.openai.com", path="/v1/chat/completions", headers=())
    return Incoming(raw)


def engine(*entries: dict[str, Any]) -> MockEngine:
    return MockEngine(spec.ExpectationsFile.model_validate({"expectations": list(entries)}))


def text_of(decision: MockDecision | MockMiss) -> str:
    assert isinstance(decision, MockDecision), decision
    assert isinstance(decision.answer, spec.Respond)
    return decision.answer.text or ""


HELLO = [{"role": "user", "content": "hello there"}]
TOOL_LOOP = [
    {"role": "user", "content": "list files"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]},
]


def test_priority_first_then_file_order() -> None:
    mock = engine(
        {"respond": {"text": "first in file"}},
        {"respond": {"text": "high"}, "priority": 5},
        {"respond": {"text": "also high, later"}, "priority": 5},
    )
    assert text_of(mock.decide(anthropic(HELLO))) == "high"


def test_times_then_the_next_expectation() -> None:
    mock = engine({"respond": {"text": "twice"}, "times": 2}, {"respond": {"text": "after"}})
    answers = [text_of(mock.decide(anthropic(HELLO))) for _ in range(3)]
    assert answers == ["twice", "twice", "after"]


def test_predicates_choose_the_answer_across_providers() -> None:
    mock = engine(
        {"match": {"containsToolResultFor": "Bash"}, "respond": {"text": "done"}},
        {"match": {"turnIndex": 0, "provider": "openai"}, "respond": {"text": "openai first turn"}},
        {"match": {"turnIndex": 0}, "respond": {"toolCalls": [{"name": "Bash", "arguments": {"command": "ls"}}]}},
    )
    assert text_of(mock.decide(anthropic(TOOL_LOOP))) == "done"
    assert text_of(mock.decide(openai(HELLO))) == "openai first turn"
    first = mock.decide(anthropic(HELLO))
    assert isinstance(first, MockDecision)
    assert isinstance(first.answer, spec.Respond)
    assert [call.name for call in first.answer.toolCalls] == ["Bash"]
    assert first.source == "expectation 3"


def test_a_miss_names_the_closest_expectation_and_why() -> None:
    mock = engine(
        {"match": {"provider": "gemini", "model": "x"}, "respond": {"text": "no"}},
        {"match": {"turnIndex": 1}, "respond": {"text": "no"}},
    )
    miss = mock.decide(anthropic(HELLO))
    assert isinstance(miss, MockMiss)
    assert miss.closest == "expectation 2"
    assert len(miss.reasons) == 1
    assert miss.reasons[0].startswith("turnIndex")
    assert miss.explain().startswith("no expectation matched; closest: expectation 2: turnIndex")


def test_of_equally_near_expectations_the_miss_names_the_more_specific() -> None:
    mock = engine(
        {"match": {"model": "claude-opus-4-1"}, "respond": {"text": "a"}},
        {"match": {"provider": "anthropic", "path": "/v1/complete"}, "respond": {"text": "b"}},
    )
    miss = mock.decide(anthropic(HELLO))
    assert isinstance(miss, MockMiss)
    assert (miss.closest, miss.reasons) == ("expectation 2", ("path: expected /v1/complete, got /v1/messages",))


def test_path_and_host_and_model() -> None:
    mock = engine(
        {"match": {"path": "^/v1/(chat|responses)"}, "respond": {"text": "openai path"}},
        {"match": {"host": "API.anthropic.com", "model": "claude-opus-4"}, "respond": {"text": "opus"}},
        {"match": {"model": "claude-haiku-4-5"}, "respond": {"text": "haiku"}},
    )
    assert text_of(mock.decide(openai(HELLO))) == "openai path"
    assert text_of(mock.decide(anthropic(HELLO, model="claude-opus-4"))) == "opus"
    assert text_of(mock.decide(anthropic(HELLO))) == "haiku"


def test_a_conversation_advances_turn_by_turn_then_stops_answering() -> None:
    mock = engine(
        {"conversation": {"turns": [{"respond": {"text": "one"}}, {"respond": {"text": "two"}}]}},
    )
    assert [text_of(mock.decide(anthropic(HELLO))) for _ in range(2)] == ["one", "two"]
    miss = mock.decide(anthropic(HELLO))
    assert isinstance(miss, MockMiss)
    assert "all 2 turns served" in miss.explain()


def test_a_turn_whose_match_fails_does_not_advance() -> None:
    mock = engine(
        {
            "conversation": {
                "turns": [
                    {"match": {"turnIndex": 0}, "respond": {"text": "calling Bash"}},
                    {"match": {"containsToolResultFor": "Bash"}, "respond": {"text": "done"}},
                ]
            }
        }
    )
    assert text_of(mock.decide(anthropic(HELLO))) == "calling Bash"
    miss = mock.decide(anthropic(HELLO))  # no tool result yet: turn 2 does not match
    assert isinstance(miss, MockMiss)
    assert "turn 2" in miss.explain()
    assert text_of(mock.decide(anthropic(TOOL_LOOP))) == "done"


def test_isolated_sessions_each_see_their_own_turn_order() -> None:
    mock = engine(
        {
            "conversation": {
                "isolateBy": {"source": "header", "name": "X-Session"},
                "turns": [{"respond": {"text": "one"}}, {"respond": {"text": "two"}}, {"respond": {"text": "three"}}],
            }
        }
    )
    order = ["a", "b", "a", "a", "b", "b"]
    seen = [(who, text_of(mock.decide(anthropic(HELLO, session=who)))) for who in order]
    assert [text for who, text in seen if who == "a"] == ["one", "two", "three"]
    assert [text for who, text in seen if who == "b"] == ["one", "two", "three"]


def test_fifty_concurrent_requests_take_fifty_script_turns_exactly_once() -> None:
    turns = [{"type": "assistant", "text": f"turn {i}"} for i in range(50)]
    mock = engine({"script": {"turns": turns, "on_exhausted": "error"}})
    request = anthropic(HELLO)
    texts: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(50)

    def ask() -> None:
        start.wait()
        answer = text_of(mock.decide(request))
        with lock:
            texts.append(answer)

    threads = [threading.Thread(target=ask) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(texts) == sorted(f"turn {i}" for i in range(50))
    exhausted = mock.decide(request)
    assert isinstance(exhausted, MockDecision)
    assert isinstance(exhausted.answer, spec.ErrorReply)


def test_failover_fails_then_answers() -> None:
    mock = engine({"failover": {"failWith": [503, 429], "retryAfter": 0.5, "then": {"text": "finally"}}})
    first, second, third = (mock.decide(anthropic(HELLO)) for _ in range(3))
    assert isinstance(first, MockDecision)
    assert isinstance(first.answer, spec.ErrorReply)
    assert isinstance(second, MockDecision)
    assert isinstance(second.answer, spec.ErrorReply)
    assert (first.answer.status, second.answer.status) == (503, 429)
    assert second.answer.retryAfter == 0.5
    assert text_of(third) == "finally"


def test_adversarial_answers_are_fixed_texts() -> None:
    mock = engine({"adversarial": "prompt_injection_ignore_instructions"})
    assert text_of(mock.decide(anthropic(HELLO))) == text_of(mock.decide(anthropic(HELLO)))
    assert text_of(mock.decide(anthropic(HELLO)))


def test_conversation_predicates_need_a_chat_request() -> None:
    raw = request(method="GET", host="example.com", path="/health", headers=())
    mock = engine({"match": {"turnIndex": 0}, "respond": {"text": "x"}})
    miss = mock.decide(Incoming(raw))
    assert isinstance(miss, MockMiss)
    assert "need a chat request" in miss.explain()


@pytest.mark.parametrize(("source", "request_headers"), [("cookie", {"cookie": "sid=abc"}), ("queryParameter", {})])
def test_isolation_from_cookie_and_query(source: str, request_headers: dict[str, str]) -> None:
    mock = engine(
        {
            "conversation": {
                "isolateBy": {"source": source, "name": "sid"},
                "turns": [{"respond": {"text": "one"}}, {"respond": {"text": "two"}}],
            }
        }
    )
    path = "/v1/messages?sid=abc" if source == "queryParameter" else "/v1/messages"
    body = orjson.dumps({"model": "m", "max_tokens": 1, "messages": HELLO})
    headers = tuple(request_headers.items())
    raw = request(body, path=path, headers=headers)
    decision = mock.decide(Incoming(raw))
    assert isinstance(decision, MockDecision)
    assert decision.source == "conversation 1 (session abc) turn 1"


def test_a_path_matches_as_sent_or_percent_decoded() -> None:
    """botocore sends a Bedrock model id's `:` as `%3A`; an expectation written with `:` still answers."""
    sent = "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse"
    body = orjson.dumps({"messages": [{"role": "user", "content": [{"text": "Hello"}]}]})
    raw = request(body, host="bedrock-runtime.us-east-1.amazonaws.com", path=sent, headers=())
    mock = engine(
        {"match": {"path": "/model/anthropic.claude-3-5-haiku-20241022-v1:0/converse"}, "respond": {"text": "literal"}},
        {"match": {"path": "^/model/[^/]+:0/converse$"}, "respond": {"text": "pattern"}},
    )
    assert text_of(mock.decide(Incoming(raw))) == "literal"
    assert text_of(mock.decide(Incoming(raw))) == "literal"
    only_pattern = engine({"match": {"path": "^/model/[^/]+:0/converse$"}, "respond": {"text": "pattern"}})
    assert text_of(only_pattern.decide(Incoming(raw))) == "pattern"
    miss = engine({"match": {"path": "/model/other:0/converse"}, "respond": {"text": "x"}}).decide(Incoming(raw))
    assert isinstance(miss, MockMiss)
