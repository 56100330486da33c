"""`models/{m}:countTokens` (docs/providers.md#gemini): not a chat exchange, so small functions, not a codec.

The request holds either `contents` (with the URL naming the model) or a whole `generateContentRequest`
(system instruction and tools included, since they count too); the answer is `{"totalTokens": N}`, with
`cachedContentTokenCount` when cached content counted.
"""

from typing import Final

from llmproxy.model import Conversation
from llmproxy.providers.base import dump_json
from llmproxy.providers.gemini.request import read_request
from llmproxy.providers.gemini.wire import get
from llmproxy.providers.node import Node

WHAT: Final = "gemini count tokens"


def decode_count_tokens_request(body: bytes) -> Conversation:
    return read_count_request(Node.parse(body, WHAT))


def read_count_request(root: Node) -> Conversation:
    """Either form, as a Conversation; the model is the one the request names, if any."""
    root.obj()
    full = get(root, "generateContentRequest")
    request = full if full.present else root
    request.obj()
    return read_request(request, request["model"].opt_string())


def encode_count_tokens_response(total_tokens: int, cached_tokens: int = 0) -> bytes:
    body: dict[str, object] = {"totalTokens": total_tokens}
    if cached_tokens:
        body["cachedContentTokenCount"] = cached_tokens
    body["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": total_tokens}]
    return dump_json(body)


def decode_count_tokens_response(body: bytes) -> int:
    """The total token count (absent means 0, as proto-JSON leaves out zero values)."""
    root = Node.parse(body, WHAT)
    root.obj()
    return get(root, "totalTokens").opt_integer()
