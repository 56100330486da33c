"""What a call says in the GenAI conventions, and its figures in Prometheus's text format — the pure part,
with plain objects: requests as they come off the wire, answers as the codecs read them."""

import json
from decimal import Decimal

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Incoming
from llmproxy.intercept.faults import FaultKind, Injected
from llmproxy.meter import Answered, Call
from llmproxy.model import Completion, StopReason, Usage
from llmproxy.model.exchange import RawRequest
from llmproxy.telemetry.conventions import attributes, duplicate_old_names, facts_of, metric_facts, span_name
from llmproxy.telemetry.metrics import CALLS, Registry, observations

SECRET = "sk-ant-api03-" + "x" * 80  # shaped like an Anthropic key, never a real one


def request(host: str, path: str, body: object, headers: dict[str, str] | None = None) -> Incoming:
    given = {"content-type": "application/json", **(headers or {})}
    data = orjson.dumps(body)
    return Incoming(RawRequest("POST", "https", host, 443, path, "HTTP/1.1", tuple(given.items()), data, None))


def anthropic_call(incoming: Incoming, usage: Usage, answered: Answered = Answered.UPSTREAM) -> Call:
    return Call("POST", incoming.host, incoming.path, answered, 200, model="claude-haiku-4-5", usage=usage)


MESSAGES = {
    "model": "claude-haiku-4-5",
    "max_tokens": 100,
    "temperature": 0.2,
    "stop_sequences": ["END"],
    "system": "Be brief.",
    "messages": [{"role": "user", "content": f"my key is {SECRET}"}],
}


def test_a_chat_call_has_the_conventions_attributes_and_cache_tokens_inside_input() -> None:
    incoming = request("api.anthropic.com", "/v1/messages", MESSAGES, {"x-llmproxy-test-id": "tests/a.py::b"})
    usage = Usage(input_tokens=1200, output_tokens=80, cache_read_tokens=1000, cache_write_tokens=100)
    completion = Completion(id="msg_1", model="claude-haiku-4-5", text="ok", stop_reason=StopReason.END_TURN)
    call = anthropic_call(incoming, usage)
    facts = facts_of(incoming, completion)
    found = attributes(call, facts, {"llmproxy.cassette": "c.json"})
    assert span_name(call, facts) == "chat claude-haiku-4-5"
    assert found["gen_ai.provider.name"] == "anthropic"
    assert found["gen_ai.request.temperature"] == 0.2
    assert found["gen_ai.request.max_tokens"] == 100
    assert found["gen_ai.request.stop_sequences"] == ("END",)
    assert found["gen_ai.response.id"] == "msg_1"
    assert found["gen_ai.response.finish_reasons"] == ("end_turn",)
    assert found["gen_ai.usage.input_tokens"] == 1200  # cache reads and writes included, as the conventions say
    assert found["gen_ai.usage.cache_read.input_tokens"] == 1000
    assert found["gen_ai.usage.cache_write.input_tokens"] == 100
    assert "gen_ai.usage.cache_creation.input_tokens" not in found  # the older name only when opted in
    assert found["llmproxy.test.id"] == "tests/a.py::b"
    assert found["llmproxy.cassette"] == "c.json"
    assert found["llmproxy.source"] == "live"
    assert "gen_ai.input.messages" not in found


def test_the_older_cache_name_is_added_when_opted_in() -> None:
    assert duplicate_old_names({"OTEL_SEMCONV_STABILITY_OPT_IN": "http, gen_ai/dup"})
    assert not duplicate_old_names({"OTEL_SEMCONV_STABILITY_OPT_IN": "http"})
    incoming = request("api.anthropic.com", "/v1/messages", MESSAGES)
    call = anthropic_call(incoming, Usage(input_tokens=10, output_tokens=1, cache_write_tokens=4))
    found = attributes(call, facts_of(incoming, None), {}, duplicate=True)
    assert found["gen_ai.usage.cache_creation.input_tokens"] == 4


def test_content_is_put_on_spans_only_when_asked_and_redacted() -> None:
    incoming = request("api.anthropic.com", "/v1/messages", MESSAGES)
    completion = Completion(text=f"your key {SECRET} is safe", stop_reason=StopReason.END_TURN)
    facts = facts_of(incoming, completion, Redactor())
    found = attributes(anthropic_call(incoming, Usage(1, 1)), facts, {})
    assert SECRET not in json.dumps(found)
    messages = json.loads(str(found["gen_ai.input.messages"]))
    assert messages[0]["role"] == "user"
    assert messages[0]["parts"][0]["type"] == "text"
    assert "my key is" in messages[0]["parts"][0]["content"]
    assert json.loads(str(found["gen_ai.system_instructions"])) == [{"type": "text", "content": "Be brief."}]
    assert json.loads(str(found["gen_ai.output.messages"]))[0]["finish_reason"] == "end_turn"


def test_the_client_traceparent_and_the_faults_are_kept() -> None:
    parent = "00-" + "1" * 32 + "-" + "2" * 16 + "-01"
    incoming = request(
        "api.openai.com", "/v1/chat/completions", {"model": "gpt-4o", "messages": []}, {"traceparent": parent}
    )
    incoming.injected.append(Injected(FaultKind.QUOTA, "rule 1", "rpm 1", 429))
    call = Call("POST", incoming.host, incoming.path, Answered.INJECTED, 429, model="gpt-4o")
    facts = facts_of(incoming, None)
    found = attributes(call, facts, {})
    assert facts.traceparent == parent
    assert found["gen_ai.provider.name"] == "openai"
    assert found["error.type"] == "429"
    assert found["llmproxy.fault.kinds"] == ("quota",)
    assert found["llmproxy.source"] == "fault"
    assert "gen_ai.response.model" not in found  # an error answer names no response model


def test_gemini_names_its_provider_by_host_and_reads_its_nested_parameters() -> None:
    body = {"contents": [], "generationConfig": {"temperature": 0.7, "maxOutputTokens": 64, "topK": 3}}
    path = "/v1beta/models/gemini-2.5-flash:generateContent"
    facts = facts_of(request("generativelanguage.googleapis.com", path, body), None)
    assert facts.provider == "gcp.gemini"
    assert facts.operation == "generate_content"
    assert dict(facts.parameters) == {
        "gen_ai.request.temperature": 0.7,
        "gen_ai.request.max_tokens": 64,
        "gen_ai.request.top_k": 3,
    }


def test_an_mcp_tool_call_is_an_execute_tool_span() -> None:
    body = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_weather", "arguments": {}}}
    incoming = request("tools.example", "/mcp", body, {"mcp-session-id": "s-1"})
    call = Call("POST", incoming.host, incoming.path, Answered.HIT, 200)
    facts = facts_of(incoming, None)
    found = attributes(call, facts, {})
    assert span_name(call, facts) == "tools/call get_weather"
    assert found["gen_ai.operation.name"] == "execute_tool"
    assert found["gen_ai.tool.name"] == "get_weather"
    assert found["mcp.method.name"] == "tools/call"
    assert found["mcp.session.id"] == "s-1"
    assert found["jsonrpc.request.id"] == "4"
    assert found["llmproxy.source"] == "replayed"


def test_the_registry_writes_prometheus_text_with_both_names_of_the_token_figures() -> None:
    registry = Registry()
    incoming = request("api.anthropic.com", "/v1/messages", MESSAGES)
    usage = Usage(input_tokens=300, output_tokens=20, cache_read_tokens=200)
    for answered in (Answered.HIT, Answered.HIT, Answered.MISS):
        call = Call(
            "POST", incoming.host, incoming.path, answered, 200, model='claude"haiku', usage=usage, latency_ms=150
        )
        for instrument, value, labels in observations(call, facts_of(incoming, None)):
            registry.add(instrument, value, labels)
    text = registry.exposition().decode()
    assert "# TYPE gen_ai_client_token_usage histogram" in text
    assert "# TYPE gen_ai_client_inference_usage_detailed_cache_read_input_tokens_total counter" in text
    assert "# TYPE gen_ai_client_operation_duration_seconds histogram" in text
    assert 'gen_ai_request_model="claude\\"haiku"' in text  # a quote in a label escaped
    cache = [line for line in text.splitlines() if line.startswith("gen_ai_client_inference_usage_detailed_cache_read")]
    assert sum(float(line.split()[-1]) for line in cache) == 600
    assert (
        registry.value(
            next(i for i, _, _ in observations(call, facts_of(incoming, None)) if i.name == "llmproxy.misses")
        )
        == 1
    )
    bucket = 'gen_ai_client_operation_duration_seconds_bucket{llmproxy_source="replayed"'
    assert any(line.startswith(bucket) and 'le="0.16"' in line and line.endswith(" 2") for line in text.splitlines())


def test_calls_of_one_shape_add_to_the_registry_what_each_observation_adds() -> None:
    """The registry keeps what a shape of call adds; each call's own duration still counts as its own."""
    incoming = request("api.anthropic.com", "/v1/messages", MESSAGES)
    incoming.injected.append(Injected(FaultKind.ERROR, "--fail", "injected 529", 529))
    usage = Usage(input_tokens=300, output_tokens=20, cache_read_tokens=200)
    calls = [
        Call(
            "POST",
            incoming.host,
            incoming.path,
            answered,
            status,
            model="claude-haiku-4-5",
            usage=usage,
            latency_ms=latency,
            ttft_ms=latency / 3,
            streamed=True,
        )
        for answered, status in ((Answered.HIT, 200), (Answered.INJECTED, 529))
        for latency in (12.0, 150.0, 150.0, 2900.0)
    ]
    shaped, observed = Registry(), Registry()
    for call in calls:
        shaped.record(call, facts_of(incoming, None))
        for instrument, value, labels in observations(call, facts_of(incoming, None)):
            observed.add(instrument, value, labels)
    assert shaped.series() == observed.series()
    assert shaped.exposition() == observed.exposition()


def test_counted_calls_folded_when_read_equal_each_observation_added_in_turn() -> None:
    """Shapes kept by the caller, costs that are not whole numbers interleaved on one series, and readings
    between the calls: what the registry reads is what adding each observation in turn reads, to the bit."""
    incoming = request("api.anthropic.com", "/v1/messages", MESSAGES)
    facts = facts_of(incoming, None)
    costs = (Decimal("0.0013"), Decimal("0.1"), Decimal("0.0000007"))
    calls = [
        Call(
            "POST",
            incoming.host,
            incoming.path,
            Answered.HIT,
            200,
            model="claude-haiku-4-5",
            usage=Usage(input_tokens=300 + index % 3, output_tokens=20),
            latency_ms=12.5 * (index % 4),
            cost_usd=costs[index % 3],
        )
        for index in range(40)
    ]
    shaped, observed = Registry(), Registry()
    kept = {}
    for index, call in enumerate(calls):
        shape = kept.setdefault(call.usage, shaped.shape(call, facts))
        shaped.record(call, facts, shape)
        for instrument, value, labels in observations(call, facts):
            observed.add(instrument, value, labels)
        if index % 7 == 0:
            assert shaped.series() == observed.series()
    assert shaped.series() == observed.series()
    assert shaped.exposition() == observed.exposition()
    assert shaped.value(CALLS) == observed.value(CALLS) == 40


def test_the_metrics_read_the_same_of_a_call_without_the_facts_only_a_span_reads() -> None:
    incoming = request(
        "api.anthropic.com", "/v1/messages", MESSAGES, {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}
    )
    incoming.injected.append(Injected(FaultKind.QUOTA, "--rpm", "quota"))
    call = anthropic_call(incoming, Usage(input_tokens=30, output_tokens=2), Answered.INJECTED)
    light, full = metric_facts(incoming), facts_of(incoming, None)
    assert light.parameters == ()
    assert light.traceparent is None
    assert list(observations(call, light)) == list(observations(call, full))
