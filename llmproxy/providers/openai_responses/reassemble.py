"""Responses event stream → Completion, for streams as servers really send them.

The final lifecycle event (`response.completed`, `.incomplete`, `.failed`) carries the whole response and
wins when its `output` is filled. The ChatGPT backend that Codex CLI talks to may send it with an empty
`output`, and a cut stream has none at all, so the output items are also rebuilt along the way:
`output_item.done` items as sent, deltas (joined once, at the end) for items that never finished.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from llmproxy.framing.sse import SseDecoder
from llmproxy.model import Completion, ProviderError
from llmproxy.providers.node import Node
from llmproxy.providers.openai_responses.common import decode_failure
from llmproxy.providers.openai_responses.response import completion_from

WHAT = "openai responses stream"

_SNAPSHOTS = frozenset({"response.created", "response.in_progress", "response.queued"})
_FINALS = frozenset({"response.completed", "response.incomplete", "response.failed"})
# text event → (the piece list it feeds, the key of its index within the item, the key of its text).
# Deltas append; `.done` events carry the whole text and replace what the deltas gave.
_PIECES = {
    "response.output_text.delta": ("text", "content_index", "delta"),
    "response.output_text.done": ("text", "content_index", "text"),
    "response.reasoning_summary_text.delta": ("summary", "summary_index", "delta"),
    "response.reasoning_summary_text.done": ("summary", "summary_index", "text"),
    "response.reasoning_text.delta": ("reasoning", "content_index", "delta"),
    "response.reasoning_text.done": ("reasoning", "content_index", "text"),
    "response.function_call_arguments.delta": ("arguments", "", "delta"),
    "response.function_call_arguments.done": ("arguments", "", "arguments"),
}


@dataclass
class _Item:
    """One output item in flight: the skeleton from `output_item.added` and the deltas since."""

    added: Node
    done: Node | None = None
    pieces: dict[tuple[str, int], list[str]] = field(default_factory=dict)

    def feed(self, kind: str, index: int, text: str, replace: bool) -> None:
        if replace:
            self.pieces[kind, index] = [text]
        else:
            self.pieces.setdefault((kind, index), []).append(text)

    def finish(self) -> Node:
        if self.done is not None:
            return self.done
        item = dict(self.added.obj())
        joined = {key: "".join(pieces) for key, pieces in sorted(self.pieces.items())}
        if any(kind == "text" for kind, _ in joined):
            item["content"] = [{"type": "output_text", "text": t} for (k, _), t in joined.items() if k == "text"]
        if any(kind == "summary" for kind, _ in joined):
            item["summary"] = [{"type": "summary_text", "text": t} for (k, _), t in joined.items() if k == "summary"]
        if any(kind == "reasoning" for kind, _ in joined):
            item["content"] = [
                {"type": "reasoning_text", "text": t} for (k, _), t in joined.items() if k == "reasoning"
            ]
        if ("arguments", 0) in joined:
            item["arguments"] = joined["arguments", 0]
        return Node(item, WHAT, self.added.path)


class _Reassembler:
    def __init__(self) -> None:
        self.snapshot: Node | None = None
        self.final: Node | None = None
        self.error: ProviderError | None = None
        self.items: dict[int, _Item] = {}

    def feed(self, data: str) -> bool:
        """Take one event's data; False once the stream says it is over (`[DONE]`)."""
        if data.startswith("[DONE]"):
            return False
        event = Node.parse(data, WHAT)
        type_ = event["type"].string()
        if type_ in _SNAPSHOTS:
            event["response"].obj()
            self.snapshot = event["response"]
        elif type_ in _FINALS:
            event["response"].obj()
            self.final = event["response"]
        elif type_ == "error":
            self.error = decode_failure(event["error"] if event["error"].present else event)
        elif type_ == "response.output_item.added":
            event["item"].obj()
            self.items[event["output_index"].integer()] = _Item(event["item"])
        elif type_ == "response.output_item.done":
            index = event["output_index"].integer()
            event["item"].obj()
            self.items.setdefault(index, _Item(event["item"])).done = event["item"]
        elif type_ in _PIECES:
            kind, index_key, text_key = _PIECES[type_]
            item = self.items.get(event["output_index"].integer())
            text = event[text_key].string()
            index = event[index_key].integer() if index_key else 0
            if item is not None:  # deltas for an item never announced: the SDK rejects those too
                item.feed(kind, index, text, replace=text_key != "delta")
        return True

    def completion(self) -> Completion:
        output = [item.finish() for _, item in sorted(self.items.items())]
        if self.final is not None:
            return completion_from(self.final, list(self.final["output"].items()) or output, self.error)
        # Cut short: what arrived, with no stop reason (the snapshot says "in_progress").
        snapshot = self.snapshot.obj() if self.snapshot is not None else {}
        return completion_from(Node({**snapshot, "status": "in_progress"}, WHAT), output, self.error)


def decode_messages(messages: Iterable[bytes]) -> Completion:
    """The same events received as WebSocket messages, one event each (no SSE framing)."""
    reassembler = _Reassembler()
    for message in messages:
        if not reassembler.feed(message.decode("utf-8", "replace")):
            break
    return reassembler.completion()


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    decoder = SseDecoder()
    reassembler = _Reassembler()
    for chunk in chunks:
        for event in decoder.feed(chunk):
            if not reassembler.feed(event.data):
                return reassembler.completion()
    decoder.close()  # an event cut off by the end of the stream never reached a client either
    return reassembler.completion()
