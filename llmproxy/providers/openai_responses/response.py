"""Responses response objects → Completion (wire-formats.md §4.2). The stream decoder ends here too."""

from collections.abc import Iterable

from llmproxy.model import Completion, ProviderError, StopReason, ToolCall
from llmproxy.providers.base import parse_arguments
from llmproxy.providers.node import Node
from llmproxy.providers.openai_responses.common import (
    INCOMPLETE_REASONS,
    decode_failure,
    decode_usage,
    timestamp,
)

WHAT = "openai responses response"


def decode_response(body: bytes) -> Completion:
    response = Node.parse(body, WHAT)
    response.obj()
    return completion_from(response, response["output"].items())


def completion_from(response: Node, output: Iterable[Node], error: ProviderError | None = None) -> Completion:
    """A Completion from a response object (`response`) and its output items (given apart, because a
    stream may have to rebuild them from deltas). `error` is an in-stream `error` event, if one came."""
    text: list[str] = []
    refused = False
    calls: list[ToolCall] = []
    summaries: list[str] = []
    signature: str | None = None
    for item in output:
        type_ = item["type"].opt_string()
        if type_ == "message":
            for part in item["content"].items():
                part_type = part["type"].string()
                if part_type == "output_text":
                    text.append(part["text"].string())
                elif part_type == "refusal":
                    text.append(part["refusal"].string())
                    refused = True
        elif type_ == "function_call":
            arguments, invalid = parse_arguments(item["arguments"].opt_string() or "")
            calls.append(ToolCall(item["call_id"].string(), item["name"].string(), arguments, invalid))
        elif type_ == "reasoning":
            parts = list(item["summary"].items()) or list(item["content"].items())
            summaries.extend(part["text"].string() for part in parts)
            if signature is None:
                signature = item["encrypted_content"].opt_string()
    status = response["status"].opt_string()
    if response["error"].present or status == "failed":
        error = decode_failure(response["error"])
    return Completion(
        id=response["id"].opt_string(),
        model=response["model"].opt_string(),
        created=timestamp(response["created_at"]),
        text="".join(text),
        tool_calls=tuple(calls),
        reasoning="\n\n".join(summaries) or None,
        reasoning_signature=signature,
        usage=decode_usage(response["usage"]),
        error=error,
        stop_reason=None if error is not None else _stop(status, response, refused, bool(calls)),
    )


def _stop(status: str | None, response: Node, refused: bool, called: bool) -> StopReason | None:
    """Responses has no stop reason: it follows from the status and what the output holds."""
    if status in ("in_progress", "queued"):  # a stream that ended early
        return None
    if status == "incomplete":
        reason = response["incomplete_details"]["reason"].opt_string()
        return INCOMPLETE_REASONS.get(reason or "", StopReason.OTHER)
    if status == "cancelled":
        return StopReason.OTHER
    if refused:
        return StopReason.REFUSAL
    return StopReason.TOOL_USE if called else StopReason.END_TURN
