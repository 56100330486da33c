"""Auditing exchanges against the codecs: what failed where, what was kept whole, and the end-of-run tally."""

import json
import pickle

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers.audit import EXCERPT_CHARS, Answer, DecodeTally, audit

CHAT = Route(Provider.OPENAI, Operation.CHAT_COMPLETIONS, False, vendor="deepseek")
MESSAGES = Route(Provider.ANTHROPIC, Operation.MESSAGES, False)
REQUEST = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


def test_a_request_and_answer_that_decode() -> None:
    answer = Answer(200, json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode())
    result = audit(CHAT, REQUEST, answer)
    assert result is not None
    assert (result.failures, result.opaque, result.label) == ((), 0, "openai chat_completions (deepseek)")


def test_a_failure_names_the_part_the_path_and_the_start_of_it() -> None:
    long = json.dumps({"model": "m", "messages": "x" * 500}).encode()
    result = audit(CHAT, long, None)
    assert result is not None
    (failure,) = result.failures
    assert (failure.part, failure.path) == ("request", "$.messages")
    assert failure.message.startswith("openai chat request: $.messages: expected")
    assert failure.excerpt == long.decode()[:EXCERPT_CHARS]


def test_error_answers_and_streams_are_audited_as_they_should_be() -> None:
    assert audit(CHAT, REQUEST, Answer(500, b"<html>bad gateway</html>")) is not None
    assert audit(CHAT, REQUEST, Answer(500, b"<html>bad gateway</html>")).failures == ()  # type: ignore[union-attr]
    broken = Answer(200, None, [b"data: {not json}\n\n"])
    (failure,) = audit(CHAT, REQUEST, broken).failures  # type: ignore[union-attr]
    assert (failure.part, failure.path, failure.excerpt) == ("response", None, "data: {not json}\n\n")


def test_opaque_parts_are_counted_not_fatal() -> None:
    request = {
        "model": "claude",
        "max_tokens": 9,
        "messages": [
            {"role": "user", "content": "search"},
            {
                "role": "assistant",
                "content": [
                    {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
                    {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
                ],
            },
        ],
    }
    result = audit(MESSAGES, json.dumps(request).encode(), None)
    assert result is not None
    assert (result.failures, result.opaque) == ((), 2)


def test_routes_no_codec_reads_are_not_audited() -> None:
    assert audit(Route(Provider.ANTHROPIC, Operation.LIST_MODELS, False), b"", Answer(200, b"{}")) is None


def test_the_tally_counts_per_route_and_shows_the_first_failures() -> None:
    tally = DecodeTally()
    bad = audit(CHAT, b"{", None)
    good = audit(MESSAGES, json.dumps({"messages": []}).encode(), None)
    for number in range(25):
        tally.add(bad, f"exchange {number}")
    tally.add(good, "exchange 99")
    lines = tally.lines()
    assert lines[0] == (
        "25 of 26 exchanges did not decode (recorded and served as they came): openai chat_completions (deepseek) 25"
    )
    assert lines[1].startswith("  not decoded: exchange 0: openai chat_completions (deepseek) request: ")
    assert lines[-1] == "  … and 5 more: `llmproxy cassette check --decode` lists all"
    assert len(lines) == 22
    assert DecodeTally().lines() == []
    copy = pickle.loads(pickle.dumps(tally))  # the writer process sends its summary back
    assert copy.lines() == lines
    copy.add(good)
    assert copy.checked[good.label] == 2  # type: ignore[union-attr]
