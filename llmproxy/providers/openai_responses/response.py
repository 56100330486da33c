"""Responses response objects → Completion (docs/providers.md#openai-responses). The stream decoder ends here too."""

from collections.abc import Callable, Iterable
from typing import Any

from llmproxy.model import (
    Completion,
    ContentPart,
    OtherPart,
    ProviderError,
    ReasoningPart,
    StopReason,
    TextPart,
    ToolCall,
)
from llmproxy.providers.base import Answer, parse_arguments, says_more
from llmproxy.providers.node import Node, Parsed
from llmproxy.providers.openai_responses.common import (
    INCOMPLETE_REASONS,
    decode_failure,
    decode_usage,
    timestamp,
)

WHAT = "openai responses response"


def decode_response(body: bytes | Parsed) -> Completion:
    response = Node.parse(body, WHAT)
    response.obj()
    return completion_from(response, response["output"].items())


def read_answer(body: Any, shown: Callable[[Any], Any] | None) -> Answer:
    """`decode_response`'s usage and function calls alone, the calls read off the body through `shown` (whole:
    whether a field is redacted may depend on the rest of the document) when it has any; a failed response (an
    `error`, the status `failed`) is an error. `shown` None: the usage alone."""
    response = Node(body, WHAT)
    response.obj()
    if response["error"].present or response["status"].opt_string() == "failed":
        return Answer(None, (), error=True)
    usage = decode_usage(response["usage"])
    if shown is None or not any(item["type"].opt_string() == "function_call" for item in response["output"].items()):
        return Answer(usage, (), error=False)
    calls = []
    for item in Node(shown(body), WHAT)["output"].items():
        if item["type"].value == "function_call":
            item.obj()
            arguments, invalid = parse_arguments(item["arguments"].opt_string() or "")
            calls.append(ToolCall(item["call_id"].string(), item["name"].string(), arguments, invalid))
    return Answer(usage, tuple(calls), error=False)


def completion_from(response: Node, output: Iterable[Node], error: ProviderError | None = None) -> Completion:
    """A Completion from a response object (`response`) and its output items (given apart, because a
    stream may have to rebuild them from deltas). `error` is an in-stream `error` event, if one came."""
    text: list[str] = []
    refused = False
    calls: list[ToolCall] = []
    summaries: list[str] = []
    signature: str | None = None
    parts: list[ContentPart] = []
    opaque = False
    for item in output:
        type_ = item["type"].opt_string()
        raw = item.obj()
        part: ContentPart | None = None
        if type_ == "message":
            said: list[str] = []
            for content in item["content"].items():
                content_type = content["type"].string()
                if content_type == "output_text":
                    said.append(content["text"].string())
                elif content_type == "refusal":
                    said.append(content["refusal"].string())
                    refused = True
            text += said
            part = TextPart("".join(said))
        elif type_ == "function_call":
            arguments, invalid = parse_arguments(item["arguments"].opt_string() or "")
            call = ToolCall(item["call_id"].string(), item["name"].string(), arguments, invalid)
            calls.append(call)
            part = call
        elif type_ == "reasoning":
            said = [p["text"].string() for p in list(item["summary"].items()) or list(item["content"].items())]
            summaries += said
            encrypted = item["encrypted_content"].opt_string()
            if signature is None:
                signature = encrypted
            part = ReasoningPart("\n\n".join(said), encrypted, id=item["id"].opt_string())
        if part is None or kept_whole(raw):
            parts.append(OtherPart(str(type_), raw))
            opaque = True
        else:
            parts.append(part)
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
        parts=tuple(parts) if opaque else (),
        stop_reason=None if error is not None else _stop(status, response, refused, bool(calls)),
    )


# What an output item's neutral part says in full; an item with anything more (set, not empty) is kept whole.
_KNOWN_ITEM_FIELDS = {
    "message": frozenset({"id", "type", "role", "status", "content"}),
    "function_call": frozenset({"id", "type", "status", "arguments", "call_id", "name"}),
    "reasoning": frozenset({"id", "type", "status", "summary", "content", "encrypted_content"}),
}
_KNOWN_CONTENT_FIELDS = {
    "output_text": frozenset({"type", "text"}),  # annotations (citations) and logprobs: kept whole
    "refusal": frozenset({"type", "refusal"}),
    "summary_text": frozenset({"type", "text"}),
    "reasoning_text": frozenset({"type", "text"}),
}


def kept_whole(item: dict[str, Any]) -> bool:
    """Whether an output item says more than its neutral part: annotations (citations), logprobs, fields of
    a later API version; every item of another type (web search, file search, code interpreter, image
    generation, MCP, compaction…)."""
    known = _KNOWN_ITEM_FIELDS.get(item.get("type"))  # type: ignore[arg-type]
    if known is None or says_more(item, known):
        return True
    for key in ("content", "summary"):
        for part in item.get(key) or ():
            fields = _KNOWN_CONTENT_FIELDS.get(str(part.get("type"))) if isinstance(part, dict) else None
            if fields is None or says_more(part, fields):
                return True
    return False


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
