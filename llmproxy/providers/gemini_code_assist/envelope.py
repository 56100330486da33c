"""Code Assist's envelopes around the Gemini bodies (docs/providers.md#gemini-cli-code-assist), both ways.

* request: `{"model", "project", "user_prompt_id", "request": {…generateContent body…}}`;
* response, and each streamed event: `{"response": {…GenerateContentResponse…}, "traceId"}`, the inner
  object without `responseId` (the Gemini CLI takes `traceId` as the response id);
* countTokens: `{"request": {"model": "models/…", "contents": […]}}` → `{"totalTokens": N}`.

Everything inside the envelopes is the Gemini codec's, reused as is; errors are Google's and unwrapped.
"""

from collections.abc import Callable, Iterable
from typing import Any, Final

from llmproxy.model import Completion, Conversation
from llmproxy.providers.base import DEFAULT_DELTA_CHARS, Answer, JsonObject, dump_json
from llmproxy.providers.gemini.assemble import Assembly
from llmproxy.providers.gemini.count_tokens import read_count_request
from llmproxy.providers.gemini.request import assistant_turns as gemini_turns
from llmproxy.providers.gemini.request import read_request
from llmproxy.providers.gemini.response import body_object, read_answer_at, read_response
from llmproxy.providers.gemini.stream import frame, read_stream, stream_objects
from llmproxy.providers.node import Node, Parsed

WHAT_REQUEST: Final = "code assist request"
WHAT_RESPONSE: Final = "code assist response"
WHAT_STREAM: Final = "code assist stream"


def decode_request(body: bytes | Parsed) -> Conversation:
    root = Node.parse(body, WHAT_REQUEST)
    root.obj()
    return read_request(root["request"], root["model"].opt_string())


def decode_count_tokens_request(body: bytes) -> Conversation:
    root = Node.parse(body, WHAT_REQUEST)
    root.obj()
    return read_count_request(root["request"])


def _wrap(payload: JsonObject) -> JsonObject:
    """A Gemini response object in its envelope; an error object travels bare."""
    if "error" in payload:
        return payload
    inner = dict(payload)
    trace_id = inner.pop("responseId")
    return {"response": inner, "traceId": trace_id}


def _unwrap(node: Node, assembly: Assembly) -> None:
    node.obj()
    assembly.add(node["response"], id=node["traceId"].opt_string())


def encode_response(completion: Completion, request: JsonObject | None = None) -> bytes:
    return dump_json(_wrap(body_object(completion, request)))


def decode_response(body: bytes | Parsed) -> Completion:
    root = Node.parse(body, WHAT_RESPONSE)
    root.obj()
    if root["error"].present:
        return read_response(root)
    return read_response(root["response"], id=root["traceId"].opt_string())


def read_answer(body: Any, shown: Callable[[Any], Any] | None) -> Answer:
    """`decode_response`'s usage and tool calls alone: the Gemini response's inside the envelope."""
    root = Node(body, WHAT_RESPONSE)
    root.obj()
    if root["error"].present:
        return Answer(None, (), error=True)
    if shown is None:
        return read_answer_at(root["response"], None)
    return read_answer_at(root["response"], lambda: Node(shown(body), WHAT_RESPONSE)["response"])


def encode_stream(
    completion: Completion, request: JsonObject | None = None, *, delta_chars: int = DEFAULT_DELTA_CHARS
) -> list[bytes]:
    return [frame(_wrap(payload)) for payload in stream_objects(completion, request, delta_chars=delta_chars)]


def decode_stream(chunks: Iterable[bytes]) -> Completion:
    return read_stream(chunks, WHAT_STREAM, _unwrap)


def assistant_turns(body: Any) -> int:
    """The turns of the Gemini request inside the envelope."""
    return gemini_turns(body.get("request") if isinstance(body, dict) else None)
