"""Non-streaming Ollama bodies (`"stream": false`): the final object, carrying the whole answer."""

from llmproxy.model import Completion
from llmproxy.providers.base import JsonObject, dump_json
from llmproxy.providers.node import Node, Parsed
from llmproxy.providers.ollama import answer, errors
from llmproxy.providers.ollama.answer import Api


def encode(api: Api, completion: Completion, request: JsonObject | None) -> bytes:
    """The body. A completion that failed is sent as the error body alone (an Ollama body cannot carry an
    answer and an error; the status is the caller's, see `encode_error`)."""
    if completion.error is not None:
        return dump_json(errors.error_object(completion.error.message))
    head = answer.head(completion, request)
    calls = completion.tool_calls if api.chat else ()
    return dump_json(answer.final(api, head, completion, completion.text, completion.reasoning or "", calls))


def decode(api: Api, body: bytes | Parsed) -> Completion:
    reader = answer.Reader(api)
    reader.read(Node.parse(body, api.what))
    return reader.completion()


def encode_chat(completion: Completion, request: JsonObject | None = None) -> bytes:
    return encode(answer.CHAT, completion, request)


def encode_generate(completion: Completion, request: JsonObject | None = None) -> bytes:
    return encode(answer.GENERATE, completion, request)


def decode_chat(body: bytes | Parsed) -> Completion:
    return decode(answer.CHAT, body)


def decode_generate(body: bytes | Parsed) -> Completion:
    return decode(answer.GENERATE, body)
