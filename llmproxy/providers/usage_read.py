"""A usage object read once for each distinct value: the gates and the dashboard read the usage of thousands of
answers, which repeat a few token counts (an agent's turns, a mock's answers), and reading one — its counts
checked one by one, then the `Usage` made, whose frozen fields are set one call at a time — cost a fifth of a
gate's reading of an answer.

A usage is a function of its JSON value alone, so the value's compact JSON is the key; what raises (a count
that is not a number) is raised again each time, never kept."""

from collections.abc import Callable
from typing import Any, Final

import orjson

from llmproxy.model import Usage
from llmproxy.providers.node import Node

KEPT: Final = 1024  # distinct usages kept for each API; more, and they are all forgotten at once


class Remembered:
    """An API's reading of a usage object (`decode`), remembering its result for each distinct object: called
    with the object's node, or (`plain`) with the object itself, which makes no node when it is known."""

    __slots__ = ("__wrapped__", "_decode", "_known")

    def __init__(self, decode: Callable[[Node], Usage | None]) -> None:
        self._decode = decode
        self._known: dict[bytes, Usage | None] = {}
        self.__wrapped__ = decode  # the reading itself, remembering nothing

    def __call__(self, node: Node) -> Usage | None:
        value = node.value
        if type(value) is not dict:  # absent, null, or wrong: read (and said) as before
            return self._decode(node)
        return self._read(value, node)

    def plain(self, value: dict[str, Any], what: str, path: str) -> Usage | None:
        """The usage object `value`, found at `path` of a `what` (named where a count in it is wrong)."""
        return self._read(value, None, what, path)

    def _read(self, value: dict[str, Any], node: Node | None, what: str = "", path: str = "") -> Usage | None:
        try:
            key = orjson.dumps(value)
        except orjson.JSONEncodeError:  # not JSON orjson writes (an integer beyond 64 bits): read each time
            return self._decode(node if node is not None else Node(value, what, path))
        known = self._known
        try:
            return known[key]
        except KeyError:
            usage = self._decode(node if node is not None else Node(value, what, path))
        if len(known) >= KEPT:
            known.clear()
        known[key] = usage
        return usage


def remembered(decode: Callable[[Node], Usage | None]) -> Remembered:
    """`decode` (an API's reading of a usage object), remembering its result for each distinct object."""
    return Remembered(decode)
