"""A usage object read once for each distinct value: the gates and the dashboard read the usage of thousands of
answers, which repeat a few token counts (an agent's turns, a mock's answers), and reading one — its counts
checked one by one, then the `Usage` made, whose frozen fields are set one call at a time — cost a fifth of a
gate's reading of an answer.

A usage is a function of its JSON value alone, so the value's compact JSON is the key; what raises (a count
that is not a number) is raised again each time, never kept."""

from collections.abc import Callable
from functools import wraps
from typing import Final

import orjson

from llmproxy.model import Usage
from llmproxy.providers.node import Node

KEPT: Final = 1024  # distinct usages kept for each API; more, and they are all forgotten at once


def remembered(decode: Callable[[Node], Usage | None]) -> Callable[[Node], Usage | None]:
    """`decode` (an API's reading of a usage object), remembering its result for each distinct object."""
    known: dict[bytes, Usage | None] = {}

    @wraps(decode)
    def read(node: Node) -> Usage | None:
        value = node.value
        if type(value) is not dict:  # absent, null, or wrong: read (and said) as before
            return decode(node)
        try:
            key = orjson.dumps(value)
        except orjson.JSONEncodeError:  # not JSON orjson writes (an integer beyond 64 bits): read each time
            return decode(node)
        try:
            return known[key]
        except KeyError:
            usage = decode(node)
        if len(known) >= KEPT:
            known.clear()
        known[key] = usage
        return usage

    return read
