"""Misses, a request debugged, the report and explain over a real running proxy's journal: the official SDKs
make the calls (OpenAI against a mock, Anthropic against a replayed cassette), the typed `Client` asks why a
request missed and what would answer another, and reads the report and explain that `llmproxy report` and
`llmproxy explain` would make of the same exchanges."""

import csv
import io
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from llmproxy.cassette.replay_index import MatchOptions, OnExhausted
from llmproxy.control.api import BASE, control_api
from llmproxy.control.at_rest import session_at_rest
from llmproxy.control.auth import Access
from llmproxy.control.client import Client, ControlError
from llmproxy.environment import CONTROL_TOKEN_VARIABLE
from llmproxy.session import Listening, Session, replaying
from tests.control.test_api import call
from tests.mock.sdk_clients import anthropic_client, openai_client, serving

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "cassettes" / "quickstart.json"
RECORDED_PROMPT = "In two sentences: what does an LLM traffic recorder let me do in CI?"
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {
            "match": {"latestMessageContains": "weather"},
            "respond": {"toolCalls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        },
        {"match": {"containsToolResultFor": "get_weather"}, "respond": {"text": "It is sunny in Paris."}},
        {"match": {"model": "gpt-4o", "latestMessageContains": "capital"}, "respond": {"text": "Paris."}},
    ]
}
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def mocked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """A tool loop of two calls (test id `agent`), then a request no expectation answers."""
    for session in serving(tmp_path_factory, EXPECTATIONS):
        with openai_client(session) as client:
            asked: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}]
            agent = {"x-llmproxy-test-id": "agent"}
            first = client.chat.completions.create(
                model="gpt-4o-mini", messages=asked, tools=[TOOL], extra_headers=agent
            )
            [use] = first.choices[0].message.tool_calls
            asked += [
                first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": use.id, "content": '{"sky": "sunny"}'},
            ]
            client.chat.completions.create(model="gpt-4o-mini", messages=asked, tools=[TOOL], extra_headers=agent)
            capital = [{"role": "user", "content": "The capital of France?"}]
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(model="gpt-4o-mini", messages=capital)
        yield session


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    """The quickstart cassette replayed (its recording served again once used): its own request, then one that
    differs in its prompt."""
    listening = Listening(ca_directory=tmp_path_factory.mktemp("ca"))
    again = MatchOptions(on_exhausted=OnExhausted.REPEAT_LAST)
    with replaying(QUICKSTART, listening=listening, timing=None, match=again) as session:
        with anthropic_client(session) as client:
            for prompt in (RECORDED_PROMPT, "Something else entirely"):
                try:
                    asked = [{"role": "user", "content": prompt}]
                    with client.messages.stream(model="claude-haiku-4-5", max_tokens=200, messages=asked) as stream:
                        stream.until_done()
                except anthropic.BadRequestError:
                    pass
        yield session


def test_a_missed_request_is_ranked_with_the_closest_expectations(mocked: Session) -> None:
    control = Client.from_environment(mocked.environment)
    [miss] = control.misses().misses
    assert (miss.seq, miss.method, miss.url, miss.model) == (
        3,
        "POST",
        "https://api.openai.com/v1/chat/completions",
        "gpt-4o-mini",
    )
    assert [(tried.id, tried.answers, tried.failed) for tried in miss.expectations] == [
        (3, False, ["model: expected gpt-4o, got gpt-4o-mini"]),  # one predicate of two failed: the nearest
        (1, False, ["latestMessageContains: 'weather' not in 'The capital of France?'"]),
        (2, False, ["containsToolResultFor: no result for get_weather (results for: none)"]),
    ]
    assert miss.recording is None  # a mock with no cassette behind it
    assert control.misses(test_id="agent").misses == []


def test_a_missed_request_is_shown_with_the_closest_recording_and_the_paths_that_differ(replayed: Session) -> None:
    control = Client.from_environment(replayed.environment)
    [miss] = control.misses().misses
    assert (miss.seq, miss.url, miss.expectations) == (2, "https://api.anthropic.com/v1/messages", [])
    recording = miss.recording
    assert recording is not None
    assert (recording.answers, recording.exchange, recording.cassette) == (False, 1, str(QUICKSTART))
    assert recording.reason == "no recorded exchange matches; closest is exchange 1, differing at:"
    assert [(d.path, d.received) for d in recording.differences] == [
        ("$.messages[0].content", "Something else entirely")
    ]


def test_a_request_debugged_says_what_would_answer_and_why_the_others_would_not(mocked: Session) -> None:
    control = Client.from_environment(mocked.environment)
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "The capital of France?"}]}
    debugged = control.debug_request("https://api.openai.com/v1/chat/completions", body)
    assert debugged.answered_by == "expectation 3"
    assert [(tried.name, tried.answers) for tried in debugged.expectations] == [
        ("expectation 1", False),
        ("expectation 2", False),
        ("expectation 3", True),
    ]
    assert debugged.expectations[0].failed == ["latestMessageContains: 'weather' not in 'The capital of France?'"]
    nothing = control.debug_request("https://api.openai.com/v1/chat/completions", {**body, "model": "o3"})
    assert (nothing.answered_by, nothing.expectations[2].failed) == (None, ["model: expected gpt-4o, got o3"])
    served = [tried.served for tried in control.expectations().expectations]
    assert served == [1, 1, 0]  # trying a request answered nothing and counted nothing


def test_a_request_debugged_against_a_cassette(replayed: Session) -> None:
    control = Client.from_environment(replayed.environment)
    recorded = {
        "max_tokens": 200,
        "messages": [{"role": "user", "content": RECORDED_PROMPT}],
        "model": "claude-haiku-4-5",
        "stream": True,
    }
    headers = {"anthropic-version": "2023-06-01"}
    debugged = control.debug_request("https://api.anthropic.com/v1/messages", recorded, headers=headers)
    assert debugged.recording is not None
    assert (debugged.answered_by, debugged.recording.answers, debugged.recording.exchange) == ("recording 1", True, 1)
    other = control.debug_request(
        "https://api.anthropic.com/v1/messages", {**recorded, "max_tokens": 50}, headers=headers
    )
    assert other.answered_by is None
    assert other.recording is not None
    assert [(d.path, d.recorded, d.received) for d in other.recording.differences] == [("$.max_tokens", "200", "50")]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"url": "/v1/chat/completions"}, "$.url: expected an absolute http(s) URL, got '/v1/chat/completions'"),
        ({"url": "https://api.openai.com:99999/"}, "$.url: Port out of range 0-65535"),
        ({}, "$.url: Field required"),
    ],
)
def test_a_bad_request_to_debug_gets_400(mocked: Session, body: Any, said: str) -> None:
    status, answer, _ = call(mocked, "POST", "/misses/debug", body, token="read-only")
    assert (status, answer["error"]) == (400, said)


def text(proxy: Session, path: str) -> tuple[str, str]:
    request = urllib.request.Request(proxy.control_api_url + path)
    request.add_header("authorization", f"Bearer {proxy.environment[CONTROL_TOKEN_VARIABLE]}")
    with DIRECT.open(request, timeout=30) as response:
        return response.headers["content-type"], response.read().decode()


def test_the_report_over_the_journal_in_each_format(mocked: Session) -> None:
    media, markdown = text(mocked, "/report")
    assert media == "text/markdown; charset=utf-8"
    assert markdown.startswith("# ")
    control = Client.from_environment(mocked.environment)
    report = json.loads(control.report("json"))
    assert report["totals"]["callCount"] == 2  # the miss was answered by no model: not a call
    assert [source["path"] for source in report["sources"]] == ["agent"]
    assert [row["model"] for row in report["calls"]] == ["gpt-4o-mini", "gpt-4o-mini"]
    assert "sk-test" not in json.dumps(report)  # the SDK's key: redacted as a cassette is
    media, table = text(mocked, "/report?format=csv")
    assert media == "text/csv; charset=utf-8"
    assert len(list(csv.DictReader(io.StringIO(table)))) >= 2
    media, page = text(mocked, "/report?format=html&testId=agent")
    assert (media, page.lstrip()[:15].lower()) == ("text/html; charset=utf-8", "<!doctype html>")
    missed = json.loads(control.report("json", source="missed"))
    assert missed["sources"][0]["path"] == "journal"


def test_explain_one_session_of_the_journal(mocked: Session) -> None:
    control = Client.from_environment(mocked.environment)
    explained = control.explain(session="agent")
    assert explained.calls == 2
    explanation = explained.explanation
    assert explanation is not None
    assert (explanation.session, explanation.call, explanation.toolCallSequence) == (
        "agent",
        2,
        ["get_weather"],
    )
    timeline = control.explain_text("timeline", test_id="agent")
    assert timeline.startswith("2 calls from ")
    assert "→ get_weather" in timeline
    assert control.explain_text("mermaid").startswith("flowchart")
    with pytest.raises(ControlError, match=r"^no chat call to explain among the 0 selected") as error:
        control.explain_text("mermaid", session="no-such-session")
    assert error.value.status == 404


def test_the_sessions_of_cassettes_at_rest_are_named_by_their_cassette() -> None:
    """`llmproxy ui CASSETTE…`: a cassette's calls are its session (and its conversations', numbered by their first
    call) under the cassette's own name, as `llmproxy report` names them — not under the journal's."""
    paths = [ROOT / "cassettes/report/clean.json", ROOT / "cassettes/report/model-overspend.json"]
    router = control_api(session_at_rest(paths))
    for group_by, named in (("test", "{}"), ("conversation", "{}#")):
        answer = router.handle("GET", f"{BASE}/report?format=json&groupBy={group_by}", b"", Access.READ)
        assert answer.status == 200, answer.body
        sessions = [session["id"] for session in json.loads(answer.body)["sessions"]]
        assert sessions, group_by
        assert all(any(session.startswith(named.format(path)) for path in paths) for session in sessions), sessions
