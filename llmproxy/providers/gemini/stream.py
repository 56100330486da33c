"""`streamGenerateContent` (docs/providers.md#gemini): every chunk is a complete response object whose parts
are a delta; the last carries the finish reason and usage. There is no terminator. A failure part-way is a
chunk holding only Google's error object (google-genai raises on a chunk that starts with `{"error":`).

With `?alt=sse` each chunk is an SSE event (`data: <json>\\r\\n\\r\\n`); without it the API streams one JSON
array. The decoder reads both; the encoder writes server-sent events, which every client asks for.
"""

from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Final

from llmproxy.framing.jsonarray import JsonArrayDecoder
from llmproxy.framing.sse import SseDecoder
from llmproxy.model import Completion
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, JsonObject, dump_json
from llmproxy.providers.gemini.assemble import Assembly
from llmproxy.providers.gemini.errors import error_object, read_error
from llmproxy.providers.gemini.response import part_groups, response_object
from llmproxy.providers.node import Node

WHAT: Final = "gemini stream"


def frame(payload: JsonObject) -> bytes:
    """One SSE event exactly as the API frames it."""
    return b"data: " + dump_json(payload) + b"\r\n\r\n"


def stream_objects(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[JsonObject]:
    """The chunks' payloads: a response object per group of parts, the last one final, or after the
    content an error object when the completion failed."""
    groups = part_groups(completion, delta_chars)
    if completion.error is not None:
        objects = [response_object(completion, request, group, final=False) for group in groups]
        return [*objects, error_object(completion.error.kind, completion.error.message)]
    groups = groups or [[]]
    last = len(groups) - 1
    return [response_object(completion, request, group, final=i == last) for i, group in enumerate(groups)]


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    return [frame(payload) for payload in stream_objects(completion, request, delta_chars=delta_chars)]


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    return read_stream(chunks, WHAT, lambda node, assembly: assembly.add(node))


def read_stream(chunks: Iterable[bytes], what: str, add: Callable[[Node, Assembly], None]) -> Completion:
    """Everything that arrived, even from a cut stream; reading stops at an error chunk. `add` folds one
    chunk's payload into the assembly (Code Assist unwraps its envelope first)."""
    assembly = Assembly()
    for data in payloads(chunks):
        node = Node.parse(data, what)
        node.obj()
        if node["error"].present:
            return assembly.completion(read_error(node, None))
        add(node, assembly)
    return assembly.completion()


def payloads(chunks: Iterable[bytes]) -> Iterator[bytes | str]:
    """Each chunk's JSON text, from server-sent events or from a streamed JSON array (told apart by the
    first byte that is not whitespace)."""
    pending = bytearray()
    source = iter(chunks)
    for chunk in source:
        pending += chunk
        if pending.strip():
            break
    if pending.strip().startswith(b"["):
        array = JsonArrayDecoder()
        yield from array.feed(bytes(pending))
        for chunk in source:
            yield from array.feed(chunk)
        return
    sse = SseDecoder()
    for chunk in chain([bytes(pending)], source):
        yield from (event.data for event in sse.feed(chunk) if event.data)
    sse.close()
