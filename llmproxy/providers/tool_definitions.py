"""Decoding a request's tool definitions once per distinct list: an agent re-sends the same `tools` on every
turn, so a report over a long session (or a mock answering it) would otherwise decode them again each time."""

from collections.abc import Callable
from typing import Final

import orjson

from llmproxy.model import ToolDefinition
from llmproxy.providers.node import Node

_KEPT: Final = 256  # distinct tool lists remembered; a proxy serving many clients forgets them all past this
_decoded: dict[tuple[Callable[[Node], ToolDefinition], bytes], tuple[ToolDefinition, ...]] = {}


def decode_tools(node: Node, decode: Callable[[Node], ToolDefinition]) -> tuple[ToolDefinition, ...]:
    """`decode` applied to each element of the `tools` list `node`, remembered by the list's JSON text (the same
    text decodes to the same definitions; a list that fails to decode is not remembered, so it fails again)."""
    if not node.present:
        return ()
    try:
        key = (decode, orjson.dumps(node.value))
    except orjson.JSONEncodeError:  # a value orjson cannot write (an integer past 64 bits): decoded each time
        return tuple(decode(tool) for tool in node.items())
    found = _decoded.get(key)
    if found is None:
        found = tuple(decode(tool) for tool in node.items())
        if len(_decoded) >= _KEPT:
            _decoded.clear()
        _decoded[key] = found
    return found
