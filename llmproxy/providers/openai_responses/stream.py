"""Completion → Responses event stream, in the order the API sends it (docs/providers.md#openai-responses).

Every event is framed with both `event:` and `data:`; `sequence_number` counts every event from 0. Each
output item is announced by `output_item.added` (an empty skeleton), filled by deltas and closed by
`output_item.done` carrying the full item, which is what Codex CLI records and what the SDK's stream
helper insists on.
"""

from typing import Any

from llmproxy.framing.sse import encode_json_event
from llmproxy.model import Completion
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, JsonObject, split_deltas
from llmproxy.providers.openai_responses.encode import message_item, output_items, response_object, text_part

_FINAL_EVENTS = {"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}


class _Events:
    """Numbers events as they are added."""

    def __init__(self) -> None:
        self.payloads: list[JsonObject] = []

    def add(self, type_: str, **fields: Any) -> None:
        self.payloads.append({"type": type_, "sequence_number": len(self.payloads), **fields})


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    return [
        encode_json_event(payload, event=payload["type"])
        for payload in stream_events(completion, request, delta_chars=delta_chars)
    ]


def stream_events(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[JsonObject]:
    """The events' JSON, unframed: an SSE stream frames each as an event, a WebSocket sends each as a message."""
    events = _Events()
    snapshot = response_object(completion, request, in_progress=True)
    events.add("response.created", response=snapshot)
    events.add("response.in_progress", response=snapshot)
    for index, item in enumerate(output_items(completion, request)):
        kind = item["type"]
        if kind == "reasoning":
            _reasoning(events, index, item, delta_chars)
        elif kind == "message":
            _message(events, index, item, delta_chars)
        elif kind == "function_call":
            _function_call(events, index, item, delta_chars)
        else:  # an item kept whole (web search, compaction…): announced and closed as it came
            events.add("response.output_item.added", output_index=index, item=item)
            events.add("response.output_item.done", output_index=index, item=item)
    final = response_object(completion, request)
    events.add(_FINAL_EVENTS[final["status"]], response=final)
    return events.payloads


def _reasoning(events: _Events, index: int, item: JsonObject, delta_chars: int) -> None:
    item_id = item["id"]
    events.add(
        "response.output_item.added",
        output_index=index,
        item={"id": item_id, "type": "reasoning", "summary": []},
    )
    for summary_index, part in enumerate(item["summary"]):
        where = {"item_id": item_id, "output_index": index, "summary_index": summary_index}
        events.add("response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""})
        for delta in split_deltas(part["text"], delta_chars):
            events.add("response.reasoning_summary_text.delta", **where, delta=delta)
        events.add("response.reasoning_summary_text.done", **where, text=part["text"])
        events.add("response.reasoning_summary_part.done", **where, part=part)
    events.add("response.output_item.done", output_index=index, item=item)


def _message(events: _Events, index: int, item: JsonObject, delta_chars: int) -> None:
    events.add(
        "response.output_item.added",
        output_index=index,
        item=message_item(item["id"], None, "in_progress"),
    )
    for content_index, part in enumerate(item["content"]):
        where = {"item_id": item["id"], "output_index": index, "content_index": content_index}
        if part.get("type") != "output_text":  # a refusal in a message kept whole
            events.add("response.content_part.added", **where, part=part)
            events.add("response.content_part.done", **where, part=part)
            continue
        events.add("response.content_part.added", **where, part=text_part(""))
        for delta in split_deltas(part["text"], delta_chars):
            events.add("response.output_text.delta", **where, delta=delta, logprobs=[])
        events.add("response.output_text.done", **where, text=part["text"], logprobs=[])
        events.add("response.content_part.done", **where, part=part)
    events.add("response.output_item.done", output_index=index, item=item)


def _function_call(events: _Events, index: int, item: JsonObject, delta_chars: int) -> None:
    events.add(
        "response.output_item.added",
        output_index=index,
        item={**item, "status": "in_progress", "arguments": ""},
    )
    where = {"item_id": item["id"], "output_index": index}
    for delta in split_deltas(item["arguments"], delta_chars):
        events.add("response.function_call_arguments.delta", **where, delta=delta)
    events.add("response.function_call_arguments.done", **where, arguments=item["arguments"])
    events.add("response.output_item.done", output_index=index, item=item)
