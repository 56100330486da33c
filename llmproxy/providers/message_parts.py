"""Kept parts of answers that are one message object — Chat Completions' `choices[0].message`, Cohere v2's
`message` — read and written the same way for both.

Such a message says its text in `content` (a string, or a list of typed items) and more in fields beside it.
A field the Completion has no place for (Chat's `annotations` url citations, `audio`; Cohere's `citations`)
is kept as `OtherPart(name, {name: value})`. A content list holding an item the Completion cannot say (a
type it does not know, or a known one with more fields) is kept item by item: plain text items as
`TextPart`s, every other item whole as `OtherPart(type, item)`, so the list is sent again as it came.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from llmproxy.model import ContentPart, OtherPart, TextPart
from llmproxy.providers.base import JsonObject, says_more

_PLAIN_TEXT = frozenset({"type", "text"})


def read(message: Mapping[str, Any], neutral: frozenset[str], known_items: frozenset[str]) -> tuple[ContentPart, ...]:
    """The message's parts in wire order when it holds anything kept whole, else ().

    `neutral` names the fields the codec decodes (besides `content`); `known_items` the content item types
    it reads (an item of another type is kept, and with it the whole list)."""
    parts: list[ContentPart] = []
    items = message.get("content")
    if isinstance(items, list) and any(_kept_item(item, known_items) for item in items):
        parts.extend(_item_part(item) for item in items)
    parts.extend(
        OtherPart(name, {name: value})
        for name, value in message.items()
        if name != "content" and says_more({name: value}, neutral)
    )
    return tuple(parts) if any(isinstance(part, OtherPart) for part in parts) else ()


def write(message: JsonObject, parts: Sequence[ContentPart]) -> None:
    """Put kept parts back into a message the codec built: the content list when one was kept, the fields."""
    items = [_wire_item(part) for part in parts if _is_item(part)]
    if any(isinstance(part, OtherPart) for part in parts if _is_item(part)):
        message["content"] = items
    for part in parts:
        if isinstance(part, OtherPart) and not _is_item(part):
            message.update(part.raw)


def wire(parts: Sequence[ContentPart]) -> list[Any]:
    """The parts as they sit in the message: content items, and one-field objects for kept fields."""
    return [_wire_item(part) for part in parts if isinstance(part, TextPart | OtherPart)]


def place(message: JsonObject, parts: Sequence[Any]) -> None:
    """The inverse of `wire`: typed items into the content list, one-field objects into the message."""
    items = [part for part in parts if isinstance(part, dict) and "type" in part]
    if items:
        message["content"] = items
    for part in parts:
        if isinstance(part, dict) and "type" not in part:
            message.update(part)


def _kept_item(item: object, known_items: frozenset[str]) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    return kind not in known_items or (kind == "text" and says_more(item, _PLAIN_TEXT))


def _item_part(item: object) -> ContentPart:
    if isinstance(item, str):
        return TextPart(item)
    if isinstance(item, dict) and item.get("type") == "text" and not says_more(item, _PLAIN_TEXT):
        return TextPart(str(item.get("text", "")))
    raw: JsonObject = item if isinstance(item, dict) else {"value": item}
    return OtherPart(str(raw.get("type")), raw)


def _is_item(part: ContentPart) -> bool:
    return isinstance(part, TextPart) or (isinstance(part, OtherPart) and "type" in part.raw)


def _wire_item(part: ContentPart) -> Any:
    return part.raw if isinstance(part, OtherPart) else {"type": "text", "text": getattr(part, "text", "")}
