"""A mocked answer on the wire: encoded by the codec of the API the request came in, streamed when the request
asks for a stream (paced by the answer's physics), with provider-correct error bodies and headers.

One `Respond` thus serves Anthropic, OpenAI Chat and Responses, Gemini, Bedrock, Azure and Ollama alike; what
a wire cannot carry (reasoning on Chat Completions) it leaves out, as the real API would.
"""

import functools
import math
from dataclasses import replace

import orjson

from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply, reason_phrase
from llmproxy.errors import UnsupportedError
from llmproxy.mock import spec
from llmproxy.mock.physics import event_offsets
from llmproxy.mock.structured import schema_violation
from llmproxy.mock.usage import declared_usage, estimate_usage
from llmproxy.mock.vectors import embed, rerank
from llmproxy.model import Completion, ErrorKind, ProviderError, Route, StopReason, ToolCall
from llmproxy.providers.base import ChatCodec, stable_id, status_kind
from llmproxy.providers.kept_parts import parts_format, read_parts
from llmproxy.providers.registry import chat_codec, embedding_codec, error_encoder, rerank_codec

STRUCTURED_OUTPUT_HEADER = "x-llmproxy-structured-output-invalid"
_JSON = ("content-type", "application/json")


def unfit(answers: spec.Expectation | spec.Turn, request: Incoming) -> str | None:
    """Why this answer cannot be given in the request's own format (a chat answer to `GET /v1/models`, an
    embedding to a chat request), or None when it can: such an expectation does not answer the request."""
    route = request.route
    if answers.embedding is not None:
        needs, fits = "an embedding answer", route is not None and embedding_codec(route) is not None
    elif answers.rerank is not None:
        needs, fits = "a rerank answer", route is not None and rerank_codec(route) is not None
    elif answers.error is not None or answers.http is not None:
        return None
    else:  # respond, script, failover, adversarial: chat answers
        needs, fits = "a chat answer", request.codec is not None
    return None if fits else f"{needs} cannot answer {_what(route)}"


def encode_answer(answer: spec.Answer, request: Incoming) -> Reply:
    if isinstance(answer, spec.Respond):
        return encode_respond(answer, request)
    if isinstance(answer, spec.ErrorReply):
        return encode_error_reply(answer, request.route)
    if isinstance(answer, spec.Embedding):
        return encode_embedding(answer, request)
    if isinstance(answer, spec.Rerank):
        return encode_rerank(answer, request)
    return encode_http(answer)


def encode_http(http: spec.HttpReply) -> Reply:
    headers = dict(http.headers)
    if http.json_ is not None:
        headers.setdefault("content-type", "application/json")
        body = orjson.dumps(http.json_)
    else:
        body = (http.body or "").encode()
    return Reply(http.status, tuple(headers.items()), body)


def encode_respond(respond: spec.Respond, request: Incoming) -> Reply:
    route, codec = _chat(request.route)
    completion, notes = _completion(respond, request, route)
    schema = respond.output_schema
    violation = schema_violation(respond.text, schema) if schema is not None else None
    extra: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    if violation is not None:
        warnings = (f"structured output invalid: {violation}",)
        extra = ((STRUCTURED_OUTPUT_HEADER, violation),)
        if respond.enforceOutputSchema:
            message = f"structured output does not match the schema: {violation}"
            reply = codec.encode_error(ErrorKind.SERVER_ERROR, message)
            failed = Completion(stop_reason=None, error=ProviderError(ErrorKind.SERVER_ERROR, message, None, 502))
            return Reply(
                502, (*reply.headers.items(), *extra), reply.body, notes=notes, warnings=warnings, completion=failed
            )
    body = request.json if isinstance(request.json, dict) else None
    if not route.streaming:
        answer = codec.encode_response(completion, body)
        return Reply(200, (_JSON, *extra), answer, notes=notes, warnings=warnings, completion=completion)
    events = codec.encode_stream(completion, body)
    headers = (("content-type", codec.stream_media_type), ("cache-control", "no-cache"), *extra)
    if respond.physics is None and not route.websocket:  # nothing to wait for: the stream goes out in one write
        return Reply(200, headers, b"".join(events), notes=notes, warnings=warnings, completion=completion)
    if respond.physics is None:  # over a WebSocket each event is a message of its own
        timed = tuple((0.0, event) for event in events)
        return Reply(200, headers, events=timed, notes=notes, warnings=warnings, completion=completion)
    output = completion.usage.output_tokens if completion.usage else 0
    per_event = [math.ceil(output / len(events))] * len(events) if events else []
    offsets = event_offsets(len(events), respond.physics, per_event)
    timed = tuple(zip(offsets, events, strict=True))
    return Reply(200, headers, events=timed, notes=notes, warnings=warnings, completion=completion)


def encode_error_reply(error: spec.ErrorReply, route: Route | None) -> Reply:
    message = error.message or f"{error.status} {reason_phrase(error.status) or 'Error'} (llmproxy mock)"
    if route is None:
        body = orjson.dumps({"error": {"message": message, "status": error.status}})
        return Reply(error.status, (_JSON, *_retry_after(error.retryAfter)), body)
    kind = status_kind(error.status)
    reply = error_encoder(route)(kind, message, retry_after=error.retryAfter)
    failed = Completion(stop_reason=None, error=ProviderError(kind, message, None, error.status))
    return Reply(error.status, tuple(reply.headers.items()), reply.body, completion=failed)


def encode_embedding(spec_: spec.Embedding, request: Incoming) -> Reply:
    codec = embedding_codec(request.route) if request.route is not None else None
    if codec is None:
        raise UnsupportedError(f"an embedding answer needs an embeddings request, got {_what(request.route)}")
    asked = original = codec.decode_request(request.body)
    if asked.model is None and request.route is not None:
        asked = replace(asked, model=request.route.model)
    if spec_.dimensions is not None:
        asked = replace(asked, dimensions=spec_.dimensions)
    if not spec_.deterministicFromInput:  # the same vectors whatever the input: only position and seed count
        asked = replace(asked, inputs=tuple(f"#{position}" for position in range(len(asked.inputs))))
    result = embed(asked, seed=spec_.seed)
    return Reply(200, (_JSON,), codec.encode_response(result, original))


def encode_rerank(spec_: spec.Rerank, request: Incoming) -> Reply:
    codec = rerank_codec(request.route) if request.route is not None else None
    if codec is None:
        raise UnsupportedError(f"a rerank answer needs a rerank request, got {_what(request.route)}")
    asked = codec.decode_request(request.body)
    if spec_.topN is not None:
        asked = replace(asked, top_n=spec_.topN)
    scored = asked
    if not spec_.deterministicFromInput:
        scored = replace(asked, query="", documents=tuple(f"#{i}" for i in range(len(asked.documents))))
    result = rerank(scored, seed=spec_.seed)
    if scored is not asked:  # scores from positions, documents as asked
        items = tuple(
            replace(item, document=asked.documents[item.index] if item.document else None) for item in result.items
        )
        result = replace(result, items=items)
    return Reply(200, (_JSON,), codec.encode_response(result, asked))


def _chat(route: Route | None) -> tuple[Route, ChatCodec]:
    codec = chat_codec(route) if route is not None else None
    if route is None or codec is None:
        raise UnsupportedError(f"a chat answer (respond) needs a chat request, got {_what(route)}")
    return route, codec


def _completion(respond: spec.Respond, request: Incoming, route: Route) -> tuple[Completion, tuple[str, ...]]:
    turn = request.turn
    calls = tuple(
        ToolCall(
            call.id or stable_id("call_", turn, position, call.name, call.arguments),
            call.name,
            call.arguments if isinstance(call.arguments, dict) else {},
            invalid_arguments=None if isinstance(call.arguments, dict) else orjson.dumps(call.arguments).decode(),
        )
        for position, call in enumerate(respond.toolCalls)
    )
    completion = Completion(
        id=_message_id(turn, respond.text, tuple(call.id for call in calls)),
        model=request.model,
        text=respond.text or "",
        tool_calls=calls,
        stop_reason=respond.stopReason or (StopReason.TOOL_USE if calls else StopReason.END_TURN),
        reasoning=respond.reasoningText,
        reasoning_signature=respond.reasoningSignature,
        usage=declared_usage(respond.usage, route.provider) if respond.usage is not None else None,
    )
    kept = respond.parts
    if kept is not None and kept.format == parts_format(route):
        completion = replace(completion, parts=read_parts(kept.format, kept.parts))
    if completion.usage is not None:
        return completion, ()
    return replace(completion, usage=estimate_usage(request.conversation, completion)), ("usage estimated",)


@functools.lru_cache(maxsize=4096)
def _message_id(turn: int, text: str | None, call_ids: tuple[str, ...]) -> str:
    """The answer's id: the same answer at the same turn gets the same id (hashing it anew per request was
    a twentieth of a mocked request's cost)."""
    return stable_id("msg_", turn, text, list(call_ids))


def _retry_after(seconds: float | None) -> tuple[tuple[str, str], ...]:
    return () if seconds is None else (("retry-after", str(math.ceil(seconds))),)


def _what(route: Route | None) -> str:
    return (
        f"{route.provider.value} {route.operation.value}" if route is not None else "a request that is not an LLM API"
    )
