"""The meter tap inside a running proxy: an answer recorded from the upstream, the same answer replayed, a
miss and a mocked answer each become a call with who answered it, its tokens, its cost and its tool calls."""

import dataclasses
import json
import ssl
from pathlib import Path

import httpx2 as httpx

from llmproxy.meter import Answered
from llmproxy.mock.usage import estimate_usage, tokens
from llmproxy.model import Provider
from llmproxy.plan import mock_plan, record_plan, replay_plan
from llmproxy.session import Listening, Session, running
from tests.e2e.clis import ScriptedServer, tool_loop

URL = "https://api.anthropic.com/v1/messages"


def body(text: str, stream: bool) -> dict[str, object]:
    message = {"role": "user", "content": text}
    return {"model": "claude-haiku-4-5", "max_tokens": 64, "messages": [message], "stream": stream}


def ask(session: Session, text: str, stream: bool = False) -> httpx.Response:
    trust = ssl.create_default_context(cafile=session.environment["SSL_CERT_FILE"])
    with httpx.Client(proxy=session.url, verify=trust, timeout=30) as client:
        headers = {"anthropic-version": "2023-06-01", "x-api-key": "test"}
        return client.post(URL, json=body(text, stream), headers=headers)


def test_recorded_then_replayed_answers_are_metered_alike(tmp_path: Path) -> None:
    cassette, ca = tmp_path / "c.json", tmp_path / "ca"
    upstream = ScriptedServer(tool_loop("Bash", {"command": "echo hi"}))
    try:
        listening = Listening(mapping={"api.anthropic.com": upstream.url}, ca_directory=ca)
        plan = dataclasses.replace(record_plan(cassette), meter=True)
        with running(Session.of(plan), listening) as recording:
            assert ask(recording, "first", stream=True).status_code == 200
            assert ask(recording, "second").status_code == 200
            meter = recording.meter
            assert meter is not None
            streamed, plain = meter.calls
    finally:
        upstream.close()
    assert (streamed.answered, plain.answered) == (Answered.UPSTREAM, Answered.UPSTREAM)
    assert streamed.provider is Provider.ANTHROPIC
    assert streamed.streamed
    assert streamed.ttft_ms is not None
    assert streamed.usage is not None
    answer = estimate_usage(None, tool_loop("Bash", {"command": "echo hi"})[0])  # the stand-in's estimate
    assert (streamed.usage.input_tokens, streamed.usage.output_tokens) == (tokens("first") + 4, answer.output_tokens)
    assert [(call.name, call.arguments) for call in streamed.tool_calls] == [("Bash", {"command": "echo hi"})]
    assert streamed.cost_usd is not None
    assert streamed.cost_usd > 0
    assert plain.tool_calls == ()

    plan = dataclasses.replace(replay_plan([cassette], timing=None), meter=True)
    with running(Session.of(plan), Listening(ca_directory=ca)) as replaying:
        assert ask(replaying, "first", stream=True).status_code == 200
        assert ask(replaying, "something else").status_code == 400  # a miss: the API's invalid-request error
        assert replaying.meter is not None
        hit, miss = replaying.meter.calls
    assert hit.answered is Answered.HIT
    assert hit.usage == streamed.usage
    assert hit.tool_calls == streamed.tool_calls
    assert hit.cost_usd == streamed.cost_usd
    assert (miss.answered, miss.status, miss.usage, miss.cost_usd) == (Answered.MISS, 400, None, None)
    assert "closest" in miss.detail


def test_a_mocked_answer_is_metered(tmp_path: Path) -> None:
    expectations = tmp_path / "e.json"
    answer = {"text": "Paris.", "usage": {"inputTokens": 10, "outputTokens": 2}}
    expectations.write_text(json.dumps({"expectations": [{"respond": answer}]}))
    plan = dataclasses.replace(mock_plan(expectations), meter=True)
    with running(Session.of(plan), Listening(ca_directory=tmp_path / "ca")) as mocking:
        assert ask(mocking, "capital?").status_code == 200
        assert mocking.meter is not None
        (call,) = mocking.meter.calls
    assert (call.answered, call.model, call.status) == (Answered.MOCK, "claude-haiku-4-5", 200)
    assert call.usage is not None
    assert (call.usage.input_tokens, call.usage.output_tokens) == (10, 2)


def test_without_the_meter_there_is_no_meter_tap(tmp_path: Path) -> None:
    expectations = tmp_path / "e.json"
    expectations.write_text(json.dumps({"expectations": []}))
    plan = mock_plan(expectations)
    assert Session.of(plan).meter is None
    assert "meter: (empty)" in plan.explain()
    assert "meter: each answer's tokens" in dataclasses.replace(plan, meter=True).explain()
