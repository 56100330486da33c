"""Telemetry reaching real backends while an official SDK calls through llmproxy: Prometheus (Debian's) scrapes
`/metrics` on the control port and a PromQL query returns the token totals the calls produced; an OTLP/HTTP
receiver decoding with the OTLP specification's protobuf messages gets one GenAI span per call, inside the
client's trace. For record (a local HTTPS upstream under the real host name), replay (what was recorded) and
mock (an expectation with prompt-cache usage). One Prometheus and one receiver serve the module."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anthropic
import pytest

from llmproxy.plan import Plan, mock_plan, record_plan, replay_plan
from llmproxy.session import Listening, Session, running
from llmproxy.telemetry.settings import TelemetryPlan
from tests.certs import make_test_ca
from tests.e2e.clis import ScriptedServer
from tests.mock.sdk_clients import trusting
from tests.record.world import turns
from tests.telemetry.backends import Prometheus, prometheus
from tests.telemetry.receiver import Received, Span, receiver

pytestmark = pytest.mark.service

HOST = "api.anthropic.com"
TRACE = "ab" * 16
PARENT = "cd" * 8
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"
QUESTIONS = ("What is the capital of France?", "And of Italy?")


@dataclass
class Stack:
    directory: Path
    otlp: str
    received: Received
    prometheus: Prometheus


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    directory = tmp_path_factory.mktemp("telemetry")
    (directory / "prometheus").mkdir()
    with receiver() as (url, received), prometheus(directory / "prometheus") as server:
        yield Stack(directory, url, received, server)


@contextmanager
def observed(stack: Stack, plan: Plan, run: str, listening: Listening) -> Iterator[Session]:
    """`plan` running with its spans and metrics exported to the receiver and `/metrics` scraped as `run`."""
    telemetry = TelemetryPlan(export=True, endpoint=stack.otlp, metrics=True, run=(("test.run", run),))
    with running(Session.of(replace(plan, telemetry=telemetry)), listening) as proxy:
        stack.prometheus.scrape(proxy.control_url.removesuffix("/llmproxy/chaos"), run)
        yield proxy


def ask(proxy: Session, questions: tuple[str, ...] = QUESTIONS) -> list[Any]:
    """The official Anthropic SDK, through the proxy, trusting its CA, in the application's trace."""
    http = anthropic.DefaultHttpxClient(proxy=proxy.url, verify=trusting(proxy))
    with anthropic.Anthropic(api_key="sk-ant-test", http_client=http, max_retries=0) as client:
        return [
            client.messages.create(
                model="claude-haiku-4-5",
                max_tokens=50,
                stop_sequences=["STOP"],
                messages=[{"role": "user", "content": question}],
                extra_headers={"traceparent": TRACEPARENT},
            )
            for question in questions
        ]


def input_tokens(answers: list[Any]) -> int:
    """The conventions' input tokens, as the SDK's own fields add up: cache reads and writes included."""
    return sum(
        a.usage.input_tokens + (a.usage.cache_read_input_tokens or 0) + (a.usage.cache_creation_input_tokens or 0)
        for a in answers
    )


def spans(received: Received, run: str) -> list[Span]:
    with received.lock:
        return [span for span in received.spans if span.attributes.get("test.run") == run]


def check_spans(stack: Stack, run: str, answers: list[Any], source: str) -> list[Span]:
    stack.received.wait(lambda got: len(spans(got, run)) == len(answers))
    found = spans(stack.received, run)
    for span, answer in zip(sorted(found, key=lambda span: span.start_ns), answers, strict=True):
        attributes = span.attributes
        assert span.name == "chat claude-haiku-4-5"
        assert span.kind == 3  # CLIENT
        assert (span.trace_id, span.parent_span_id) == (TRACE, PARENT)  # inside the application's trace
        assert attributes["llmproxy.source"] == source
        assert attributes["gen_ai.provider.name"] == "anthropic"
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.request.stop_sequences"] == ("STOP",)
        assert attributes["gen_ai.request.max_tokens"] == 50
        assert attributes["gen_ai.response.id"] == answer.id
        assert attributes["gen_ai.usage.input_tokens"] == input_tokens([answer])
        assert attributes["gen_ai.usage.output_tokens"] == answer.usage.output_tokens
        assert attributes["gen_ai.usage.cache_read.input_tokens"] == (answer.usage.cache_read_input_tokens or 0)
        assert attributes["gen_ai.usage.cache_write.input_tokens"] == (answer.usage.cache_creation_input_tokens or 0)
        assert attributes["server.address"] == HOST
        assert "gen_ai.input.messages" not in attributes  # content only with --otel-content
        assert span.resource["service.name"] == "llmproxy"
    return found


def check_prometheus(stack: Stack, run: str, answers: list[Any]) -> None:
    selector = f'{{run="{run}"}}'
    expected = input_tokens(answers)
    query = f"sum(gen_ai_client_inference_usage_detailed_input_tokens_total{selector})"
    assert stack.prometheus.value(query, expected) == expected
    output = sum(answer.usage.output_tokens for answer in answers)
    query = f'sum(gen_ai_client_token_usage_sum{{run="{run}",gen_ai_token_type="output"}})'
    assert stack.prometheus.value(query, output) == output
    query = f"sum(llmproxy_calls_total{selector})"
    assert stack.prometheus.value(query, len(answers)) == len(answers)


@pytest.fixture(scope="module")
def recorded(stack: Stack) -> Iterator[tuple[Path, list[Any]]]:
    """A recording through llmproxy from a local HTTPS upstream answering as api.anthropic.com."""
    directory = stack.directory / "record"
    directory.mkdir()
    upstream_ca = make_test_ca(directory, (HOST,))
    upstream = ScriptedServer(turns(len(QUESTIONS)), tls=upstream_ca.server_context)
    cassette = directory / "session.json"
    listening = Listening(
        mapping={HOST: upstream.url}, upstream_ca=upstream_ca.cert_path, ca_directory=directory / "ca"
    )
    try:
        with observed(stack, record_plan(cassette), "record", listening) as proxy:
            answers = ask(proxy)
            check_prometheus(stack, "record", answers)
        yield cassette, answers
    finally:
        upstream.close()


def test_a_recording_reaches_prometheus_and_the_otlp_receiver(stack: Stack, recorded: tuple[Path, list[Any]]) -> None:
    cassette, answers = recorded
    found = check_spans(stack, "record", answers, "live")
    assert all(span.attributes["llmproxy.cassette"] == str(cassette) for span in found)
    assert all(span.attributes["llmproxy.cost.priced"] is True for span in found)
    expected = input_tokens(answers)
    stack.received.wait(
        lambda got: (
            got.metric_sum("gen_ai.client.inference.usage.detailed.input_tokens", **{"llmproxy.source": "live"})
            == expected
        )
    )


def test_a_replay_reaches_prometheus_and_the_otlp_receiver(stack: Stack, recorded: tuple[Path, list[Any]]) -> None:
    cassette, _ = recorded
    listening = Listening(ca_directory=stack.directory / "record" / "ca")
    with observed(stack, replay_plan([cassette], timing=None), "replay", listening) as proxy:
        answers = ask(proxy)
        check_prometheus(stack, "replay", answers)
    check_spans(stack, "replay", answers, "replayed")


def test_a_mock_reaches_prometheus_and_the_otlp_receiver_with_its_cache_tokens(stack: Stack) -> None:
    usage = {"inputTokens": 120, "outputTokens": 14, "cachedInputTokens": 100, "cacheCreationTokens": 20}
    expectations = stack.directory / "expectations.json"
    expectations.write_text(json.dumps({"expectations": [{"respond": {"text": "Paris.", "usage": usage}}]}))
    listening = Listening(ca_directory=stack.directory / "mock-ca")
    with observed(stack, mock_plan(expectations), "mock", listening) as proxy:
        answers = ask(proxy)
        check_prometheus(stack, "mock", answers)
        query = 'sum(gen_ai_client_inference_usage_detailed_cache_read_input_tokens_total{run="mock"})'
        assert stack.prometheus.value(query, 200) == 200
    found = check_spans(stack, "mock", answers, "mocked")
    assert {span.attributes["gen_ai.usage.cache_read.input_tokens"] for span in found} == {100}
