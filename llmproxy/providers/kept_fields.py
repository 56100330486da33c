"""Fields of an answer's envelope that a Completion has no place for — Anthropic's `container` and
`context_management`, Gemini's `groundingMetadata` and `citationMetadata`, Converse's `trace` — kept whole
so the answer can be sent again exactly, and counted like any other kept part.

A kept field is `OtherPart("<where>.<name>", {name: value})`: `where` names the object it sits on
(`message`, `candidate`, `response`), so an encoder puts it back there, in a body or in the stream event
that carries it. Kept fields follow the content parts in `Completion.parts`, ordered by name: a body and a
stream of one answer then decode alike, although their fields arrive in other places and orders.
(Chat Completions and Cohere, whose answers are one message, keep its fields as `message_parts` says.)
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llmproxy.model import ContentPart, OtherPart
from llmproxy.providers.base import JsonObject, says_more


def keep(where: str, obj: Mapping[str, Any], known: Iterable[str]) -> list[OtherPart]:
    """The fields of `obj` set beyond `known` (a null, [] or {} says nothing), as kept parts."""
    fields = frozenset(known)
    return [
        field(where, name, value)
        for name, value in obj.items()
        if name not in fields and says_more({name: value}, fields)  # most fields are known: asked of none
    ]


def field(where: str, name: str, value: Any) -> OtherPart:
    return OtherPart(f"{where}.{name}", {name: value})


def ordered(content: Iterable[ContentPart], fields: Iterable[OtherPart]) -> tuple[ContentPart, ...]:
    """The content parts in wire order, then the kept fields by name (the last value of each wins)."""
    latest = {part.kind: part for part in fields}
    return (*content, *(latest[kind] for kind in sorted(latest)))


def is_field(part: ContentPart) -> bool:
    return isinstance(part, OtherPart) and "." in part.kind and len(part.raw) == 1


def content(parts: Sequence[ContentPart]) -> list[ContentPart]:
    """The parts that are not kept fields."""
    return [part for part in parts if not is_field(part)]


def at(where: str, parts: Sequence[ContentPart]) -> JsonObject:
    """The fields kept on `where`, as they sat there."""
    prefix = where + "."
    kept: JsonObject = {}
    for part in parts:
        if isinstance(part, OtherPart) and part.kind.startswith(prefix) and is_field(part):
            kept.update(part.raw)
    return kept
