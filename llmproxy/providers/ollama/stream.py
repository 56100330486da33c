"""Streamed Ollama answers (`application/x-ndjson`): one object per line, thinking then text cut into
deltas, tool calls whole in one object (Ollama never streams arguments), then the `done: true` object with
the done reason and counts; or, after the content so far, an `{"error": "…"}` line and nothing more."""

from collections.abc import Iterable

from llmproxy.framing.ndjson import NdjsonDecoder, encode_line
from llmproxy.model import Completion
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, JsonObject, split_deltas
from llmproxy.providers.node import Node
from llmproxy.providers.ollama import answer, errors
from llmproxy.providers.ollama.answer import Api


def encode(api: Api, completion: Completion, request: JsonObject | None, delta_chars: int) -> list[bytes]:
    head = answer.head(completion, request)
    lines = [
        encode_line(answer.content(api, head, thinking=p))
        for p in split_deltas(completion.reasoning or "", delta_chars)
    ]
    lines += [encode_line(answer.content(api, head, text=p)) for p in split_deltas(completion.text, delta_chars)]
    if api.chat and completion.tool_calls:
        lines.append(encode_line(answer.content(api, head, tool_calls=completion.tool_calls)))
    if completion.error is not None:
        lines.append(encode_line(errors.error_object(completion.error.message)))
    else:
        lines.append(encode_line(answer.final(api, head, completion)))
    return lines


def decode(api: Api, chunks: Iterable[bytes]) -> Completion:
    """Everything that arrived, even from a cut stream; reading stops at an `error` line."""
    reader = answer.Reader(api)
    decoder = NdjsonDecoder()
    for chunk in chunks:
        for value in decoder.feed(chunk):
            reader.read(Node(value, api.what))
            if reader.error is not None:
                return reader.completion()
    decoder.close()
    return reader.completion()


def encode_chat(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    return encode(answer.CHAT, completion, request, delta_chars)


def encode_generate(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    return encode(answer.GENERATE, completion, request, delta_chars)


def decode_chat(chunks: Iterable[bytes]) -> Completion:
    return decode(answer.CHAT, chunks)


def decode_generate(chunks: Iterable[bytes]) -> Completion:
    return decode(answer.GENERATE, chunks)
