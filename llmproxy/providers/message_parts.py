"""Kept parts of answers that are one message object — Chat Completions' `choices[0].message`, Cohere v2's
`message` — read and written the same way for both.

Such a message says its text in `content` (a string, or a list of typed items) and more in fields beside it.
A field the Completion has no place for (Chat's `annotations` url citations, `audio`; Cohere's `citations`)
is kept as `OtherPart(name, {name: value})`, after the content, by name. A content list holding an item the
Completion cannot say (a type it does not know, or a known one with more fields) is kept item by item: plain
text items as `TextPart`s, every other item whole as `OtherPart(type, item)`, so the list is sent again as it
came. A stream sends text as pieces and each kept item whole in a list of its own (`Streamed`).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    parts.extend(fields(message, neutral))
    return tuple(parts) if any(isinstance(part, OtherPart) for part in parts) else ()


def fields(message: Mapping[str, Any], neutral: frozenset[str]) -> list[OtherPart]:
    """The message's kept fields, by name."""
    kept = (name for name, value in message.items() if name != "content" and says_more({name: value}, neutral))
    return [OtherPart(name, {name: message[name]}) for name in sorted(kept)]


def items(parts: Sequence[ContentPart]) -> list[ContentPart]:
    """The parts that are content items, when any of them is kept whole (else the text says them all)."""
    listed = [part for part in parts if _is_item(part)]
    return listed if any(isinstance(part, OtherPart) for part in listed) else []


@dataclass(slots=True)
class Streamed:
    """A streamed message's content items: text pieces (strings, or plain text items) run together into one
    `TextPart`, any other item whole, in arrival order."""

    known_items: frozenset[str]
    parts: list[ContentPart | list[str]] = field(default_factory=list)
    kept: bool = False

    def add(self, content: object) -> None:
        for item in content if isinstance(content, list) else [content] if isinstance(content, str) else []:
            part = _item_part(item)
            if isinstance(part, TextPart):
                last = self.parts[-1] if self.parts else None
                if not isinstance(last, list):
                    last = []
                    self.parts.append(last)
                last.append(part.text)
            else:
                self.kept = self.kept or _kept_item(item, self.known_items)
                self.parts.append(part)

    def read(self) -> list[ContentPart]:
        """The items, when one of them is kept whole; else none (the text says them all)."""
        if not self.kept:
            return []
        return [TextPart("".join(part)) if isinstance(part, list) else part for part in self.parts]


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
