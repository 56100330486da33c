"""What a metered call says in the OpenTelemetry GenAI semantic conventions (the semantic-conventions-genai
repository: "Semantic conventions for generative client AI spans", the attribute registry `gen_ai.*`, and the
MCP conventions `mcp.*`), with llmproxy's own attributes under `llmproxy.*` — the table in
docs/telemetry.md#attributes.

`Facts` is what the call itself does not keep and only the request knows: read off the `Incoming` while it is
at hand (a few look-ups in what is already decoded; the messages only with `--otel-content`), then turned into
attributes on the telemetry's own thread. Pure: nothing here imports the OpenTelemetry SDK.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Incoming
from llmproxy.meter import Answered, Call
from llmproxy.model import Completion, Provider
from llmproxy.model.content import ContentPart, TextPart, ToolCall, ToolResultPart
from llmproxy.model.conversation import Conversation
from llmproxy.model.routing import Operation, Route
from llmproxy.tool_protocols import SESSION_HEADER, protocol

type AttributeValue = str | bool | int | float | tuple[str, ...]
type Attributes = dict[str, AttributeValue]

SOURCES: Final = {  # llmproxy.source: who answered, in the words of docs/telemetry.md
    Answered.UPSTREAM: "live",
    Answered.HIT: "replayed",
    Answered.MOCK: "mocked",
    Answered.INJECTED: "fault",
    Answered.MISS: "missed",
    Answered.ERROR: "error",
}

# gen_ai.operation.name: the conventions' well-known values where one applies, else the API's own operation
OPERATIONS: Final = {
    Operation.MESSAGES: "chat",
    Operation.CHAT_COMPLETIONS: "chat",
    Operation.RESPONSES: "chat",
    Operation.CHAT: "chat",
    Operation.CONVERSE: "chat",
    Operation.INVOKE: "chat",
    Operation.GENERATE: "text_completion",
    Operation.GENERATE_CONTENT: "generate_content",
    Operation.EMBEDDINGS: "embeddings",
    Operation.RESPONSE_RETRIEVE: "fetch_response",
}

# gen_ai.provider.name: the conventions' well-known values; an API they do not list keeps llmproxy's name
PROVIDERS: Final = {
    Provider.ANTHROPIC: "anthropic",
    Provider.OPENAI: "openai",
    Provider.AZURE: "azure.ai.openai",
    Provider.BEDROCK: "aws.bedrock",
    Provider.GEMINI: "gcp.gen_ai",
    Provider.GEMINI_CODE_ASSIST: "gcp.gen_ai",
    Provider.COHERE: "cohere",
}
VENDORS: Final = {"deepseek": "deepseek", "groq": "groq", "mistral": "mistral_ai", "xai": "x_ai"}

# the request's parameters, by the body's field names, as gen_ai.request.* (the conventions' names)
PARAMETERS: Final = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "topP": "gen_ai.request.top_p",
    "top_k": "gen_ai.request.top_k",
    "topK": "gen_ai.request.top_k",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "maxOutputTokens": "gen_ai.request.max_tokens",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "seed": "gen_ai.request.seed",
    "n": "gen_ai.request.choice.count",
    "stop": "gen_ai.request.stop_sequences",
    "stop_sequences": "gen_ai.request.stop_sequences",
    "stopSequences": "gen_ai.request.stop_sequences",
}
_ORDER: Final = {field: index for index, field in enumerate(PARAMETERS)}
NESTED: Final = ("generationConfig", "inferenceConfig", "options")  # Gemini, Bedrock Converse, Ollama

# `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai/dup`: also the older names a consumer may still read
STABILITY_OPT_IN: Final = "OTEL_SEMCONV_STABILITY_OPT_IN"
DUPLICATE: Final = "gen_ai/dup"


def duplicate_old_names(environ: Mapping[str, str] = os.environ) -> bool:
    return DUPLICATE in {part.strip() for part in environ.get(STABILITY_OPT_IN, "").split(",")}


@dataclass(frozen=True, slots=True)
class Tool:
    """An MCP or A2A call: its protocol, JSON-RPC method and id, the tool called, the MCP session."""

    protocol: str
    method: str | None
    tool: str | None = None
    request_id: str | None = None
    session: str | None = None


class Facts(NamedTuple):
    """What the request and the answer say beyond the `Call`. The messages are JSON in the conventions' shape,
    redacted, present only when content was asked for. A named tuple, as a `Call` is: one is made per call."""

    operation: str | None = None
    provider: str | None = None
    port: int | None = None
    parameters: tuple[tuple[str, AttributeValue], ...] = ()
    streamed_asked: bool | None = None
    response_id: str | None = None
    finish_reasons: tuple[str, ...] = ()
    traceparent: str | None = None
    tracestate: str | None = None
    faults: tuple[str, ...] = ()
    test_id: str | None = None
    tool: Tool | None = None
    input_messages: str | None = None
    output_messages: str | None = None
    system_instructions: str | None = None


def facts_of(incoming: Incoming, completion: Completion | None, content: Redactor | None = None) -> Facts:
    """The facts of `incoming` and its answer; `content`: also the messages, redacted by it."""
    route, headers, body = incoming.route, incoming.headers, incoming.json
    asked = isinstance(body, dict)
    stream = body.get("stream") if asked else None
    injected = incoming.injected
    if completion is not None:
        response_id, stop = completion.id, completion.stop_reason
        finish_reasons = (stop.value,) if stop else ()
    else:
        response_id, finish_reasons = None, ()
    if route is None:
        operation = provider = None
        parameters: tuple[tuple[str, AttributeValue], ...] = ()
        tool, conversation = _tool(incoming), None
    else:
        operation, provider = operation_name(route), provider_name(route, incoming.host)
        parameters = _parameters(body) if asked else ()
        tool, conversation = None, incoming.conversation if content is not None else None
    return Facts(
        operation,
        provider,
        incoming.port,
        parameters,
        stream if stream is True or stream is False else None,
        response_id,
        finish_reasons,
        headers.get("traceparent"),
        headers.get("tracestate"),
        tuple(fault.kind.value for fault in injected) if injected else (),
        incoming.test_id,
        tool,
        _input_messages(conversation, content) if conversation and content else None,
        _output_messages(completion, content) if completion is not None and content else None,
        _system(conversation, content) if conversation and content else None,
    )


def metric_facts(incoming: Incoming) -> Facts:
    """The facts the metrics read (`llmproxy.telemetry.metrics.labels` and the faults): all a call needs when no
    span is made of it."""
    route, injected = incoming.route, incoming.injected
    faults = tuple(fault.kind.value for fault in injected) if injected else ()
    if route is None:
        return Facts(faults=faults)
    return Facts(operation_name(route), provider_name(route, incoming.host), faults=faults)


def operation_name(route: Route) -> str:
    return OPERATIONS.get(route.operation, route.operation.value)


def provider_name(route: Route, host: str) -> str:
    if route.vendor is not None:
        return VENDORS.get(route.vendor, route.vendor)
    if route.provider is Provider.GEMINI:
        if host.endswith("aiplatform.googleapis.com"):
            return "gcp.vertex_ai"
        if host == "generativelanguage.googleapis.com":
            return "gcp.gemini"
    return PROVIDERS.get(route.provider, route.provider.value)


def span_name(call: Call, facts: Facts) -> str:
    """`{gen_ai.operation.name} {gen_ai.request.model}` for a model's call; `{mcp.method.name} {tool}` for a tool
    server's (the MCP conventions); the HTTP method and host for anything else."""
    if facts.operation is not None:
        return f"{facts.operation} {call.model}" if call.model else facts.operation
    if facts.tool is not None and facts.tool.method is not None:
        return f"{facts.tool.method} {facts.tool.tool}" if facts.tool.tool else facts.tool.method
    return f"{call.method} {call.host}"


def error_type(call: Call) -> str | None:
    """`error.type`: the status of an error answer, or why there was none."""
    if call.status is None:
        return "no_response"
    if call.status >= 400:
        return str(call.status)
    return None


def attributes(call: Call, facts: Facts, run: Mapping[str, str], duplicate: bool = False) -> Attributes:
    """The span's attributes. `run`: the run's own (`llmproxy.run.id`, `llmproxy.cassette`); `duplicate`: also
    the older usage names (`duplicate_old_names`)."""
    found: Attributes = {"server.address": call.host, "llmproxy.source": SOURCES[call.answered]}
    found.update(
        _present(
            ("server.port", facts.port),
            ("gen_ai.operation.name", facts.operation),
            ("gen_ai.provider.name", facts.provider),
        )
    )
    if call.model:
        found["gen_ai.request.model"] = call.model
        if call.answered is not Answered.MISS and call.status is not None and call.status < 400:
            found["gen_ai.response.model"] = call.model
    found.update(facts.parameters)
    if facts.streamed_asked is not None:
        found["gen_ai.request.stream"] = facts.streamed_asked
    if facts.response_id:
        found["gen_ai.response.id"] = facts.response_id
    if facts.finish_reasons:
        found["gen_ai.response.finish_reasons"] = facts.finish_reasons
    if (usage := call.usage) is not None:
        found["gen_ai.usage.input_tokens"] = usage.input_tokens
        found["gen_ai.usage.output_tokens"] = usage.output_tokens
        found["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
        found["gen_ai.usage.cache_write.input_tokens"] = usage.cache_write_tokens
        found["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning_tokens
        if duplicate:
            found["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
        if usage.estimated:
            found["llmproxy.usage.estimated"] = True
    if call.ttft_ms is not None and call.streamed:
        found["gen_ai.response.time_to_first_chunk"] = call.ttft_ms / 1000
    if (error := error_type(call)) is not None:
        found["error.type"] = error
    if call.status is not None:
        found["http.response.status_code"] = call.status
    found["http.request.method"] = call.method
    found["url.path"] = call.path.split("?", 1)[0]
    if call.cost_usd is not None:
        found["llmproxy.cost.usd"] = float(call.cost_usd)
    if call.usage is not None:
        found["llmproxy.cost.priced"] = call.cost_usd is not None
    if call.unpriced:
        found["llmproxy.cost.unpriced_reason"] = call.unpriced
    if call.answered is Answered.MISS and call.detail:
        found["llmproxy.miss.reason"] = call.detail
    if facts.faults:
        found["llmproxy.fault.kinds"] = facts.faults
    if facts.test_id:
        found["llmproxy.test.id"] = facts.test_id
    found.update({key: value for key, value in run.items() if value})
    if (tool := facts.tool) is not None:
        found.update(_tool_attributes(tool))
    for key, value in (
        ("gen_ai.input.messages", facts.input_messages),
        ("gen_ai.output.messages", facts.output_messages),
        ("gen_ai.system_instructions", facts.system_instructions),
    ):
        if value is not None:
            found[key] = value
    return found


def attributes_shape(call: Call, facts: Facts) -> tuple[object, ...]:
    """All that `attributes` reads of a call and its facts but the trace they belong to: two calls of one shape
    have the same attributes (a recording replayed again and again, its request the same)."""
    return (
        call.method,
        call.host,
        call.path,
        call.answered,
        call.status,
        call.model,
        call.usage,
        call.ttft_ms if call.streamed else None,
        call.detail,
        call.cost_usd,
        call.unpriced,
        facts.operation,
        facts.provider,
        facts.port,
        facts.parameters,
        facts.streamed_asked,
        facts.response_id,
        facts.finish_reasons,
        facts.faults,
        facts.test_id,
        facts.tool,
        facts.system_instructions,
    )


def _tool_attributes(tool: Tool) -> Attributes:
    found: Attributes = {"llmproxy.tool.protocol": tool.protocol}
    if tool.protocol == "mcp":
        found.update(_present(("mcp.method.name", tool.method), ("mcp.session.id", tool.session)))
        if tool.method == "tools/call":
            found["gen_ai.operation.name"] = "execute_tool"
    else:
        found.update(_present(("rpc.method", tool.method)))
    found.update(_present(("gen_ai.tool.name", tool.tool), ("jsonrpc.request.id", tool.request_id)))
    return found


def _present(*given: tuple[str, AttributeValue | None]) -> Attributes:
    """The attributes of `given` that have a value."""
    return {key: value for key, value in given if value is not None}


def _parameters(body: dict[str, Any]) -> tuple[tuple[str, AttributeValue], ...]:
    """The request's parameters, the body's own first, then those nested in `NESTED`; of two fields with one
    name (`max_tokens`, `max_completion_tokens`), the one `PARAMETERS` lists first. A body's few keys are looked
    up in `PARAMETERS`, not its sixteen fields in the body: this runs for every call."""
    found: dict[str, AttributeValue] = {}
    _add_parameters(body, found)
    for key in NESTED:
        if isinstance(nested := body.get(key), dict):
            _add_parameters(nested, found)
    return tuple(found.items())


def _add_parameters(where: dict[str, Any], found: dict[str, AttributeValue]) -> None:
    fields = [field for field in where if field in PARAMETERS]
    if len(fields) > 1:
        fields.sort(key=_ORDER.__getitem__)
    for field in fields:
        value = where[field]
        name = PARAMETERS[field]
        if value is True or value is False or name in found:
            continue
        if isinstance(value, (int, float)):
            found[name] = value
        elif isinstance(value, str) and name == "gen_ai.request.stop_sequences":
            found[name] = (value,)
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            found[name] = tuple(value)


def _tool(incoming: Incoming) -> Tool | None:
    headers, body = incoming.headers, incoming.json
    spoken = protocol(incoming.method, incoming.path, headers, body)
    if spoken is None:
        return None
    message = body[0] if isinstance(body, list) and body else body
    if not isinstance(message, dict):
        return Tool(spoken, None, session=headers.get(SESSION_HEADER))
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) and isinstance(params.get("name"), str) else None
    method = message.get("method") if isinstance(message.get("method"), str) else None
    request_id = message.get("id")
    return Tool(
        spoken,
        method,
        tool=name if method == "tools/call" else None,
        request_id=str(request_id) if isinstance(request_id, str | int) else None,
        session=headers.get(SESSION_HEADER),
    )


def _part(part: ContentPart, redactor: Redactor) -> dict[str, Any]:
    """A part in the conventions' message schema (gen-ai-input-messages.json): text, tool calls and their
    responses; any other part by its type alone (no image or audio bytes go into a span)."""
    if isinstance(part, TextPart):
        return {"type": "text", "content": redactor.text(part.text)}
    if isinstance(part, ToolCall):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": redactor.json(part.arguments)}
    if isinstance(part, ToolResultPart):
        text = "".join(p.text for p in part.content if isinstance(p, TextPart))
        return {"type": "tool_call_response", "id": part.tool_call_id, "response": redactor.text(text)}
    return {"type": type(part).__name__.removesuffix("Part").lower()}


def _input_messages(conversation: Conversation, redactor: Redactor) -> str:
    messages = [
        {"role": message.role.value, "parts": [_part(part, redactor) for part in message.parts]}
        for message in conversation.messages
    ]
    return orjson.dumps(messages).decode()


def _system(conversation: Conversation, redactor: Redactor) -> str | None:
    if not conversation.system:
        return None
    return orjson.dumps([_part(part, redactor) for part in conversation.system]).decode()


def _output_messages(completion: Completion, redactor: Redactor) -> str:
    parts: list[dict[str, Any]] = []
    if completion.text:
        parts.append({"type": "text", "content": redactor.text(completion.text)})
    parts += [_part(call, redactor) for call in completion.tool_calls]
    message: dict[str, Any] = {"role": "assistant", "parts": parts}
    if completion.stop_reason is not None:
        message["finish_reason"] = completion.stop_reason.value
    return orjson.dumps([message]).decode()
