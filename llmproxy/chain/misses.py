"""What a request nothing answers gets in strict replay and mock: an error that ends the client at once and
carries llmproxy's diagnostic as the error message its SDK or CLI shows.

By default it is the provider's own "invalid request" error (HTTP 400, in the API's error shape), which no
client retries (docs/providers.md#how-the-sdks-retry): the Stainless SDKs (Anthropic, OpenAI; Claude Code,
opencode through the AI SDK) retry 408, 409, 429 and 5xx, and `x-should-retry: false` forbids even those;
Codex retries 5xx and transport errors; the Gemini CLI retries 429 and 5xx; google-genai and botocore retry
neither 400. A 5xx — MockServer's 599 — is retried by all of them, so a miss took minutes to surface: it
stays available as an explicit `--miss-status`.

A JSON-RPC request to an MCP server or an A2A agent gets a JSON-RPC error instead (`NOT_RECORDED`, with the
request's id, HTTP 200): its SDK raises it with llmproxy's diagnostic as the message, where a 404 would read as
a session gone (the MCP client starts another) and say nothing of why.
"""

from dataclasses import dataclass
from typing import Any

import orjson

from llmproxy.model import ErrorKind, Route
from llmproxy.providers.registry import error_encoder
from llmproxy.tool_protocols import NOT_RECORDED

NO_RETRY = (
    ("x-should-retry", "false"),  # read by the Stainless SDKs before any status rule
    # opencode retries any error whose text looks transient (a "500" or "rate limit" anywhere in it, and a
    # diagnostic quotes prompts and paths), waiting what retry-after-ms says: then at once, not for a minute
    ("retry-after-ms", "0"),
)
MISS_HEADER = ("x-llmproxy-miss", "1")  # tells a reader of the traffic that llmproxy answered, not the API


@dataclass(frozen=True, slots=True)
class MissReply:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


def miss_reply(route: Route | None, message: str, status: int | None = None) -> MissReply:
    """The answer to a miss on `route` with `message` as the error's text: the provider's invalid-request
    error (400), or off the LLM APIs (`route` None) a plain JSON "not found" (404), marked not to be retried.
    `status` replaces the default with that status alone, so a client retries it by its own rules."""
    retry = (MISS_HEADER,) if status is not None else (*NO_RETRY, MISS_HEADER)
    if route is None:
        body = orjson.dumps({"error": {"type": "not_found_error", "message": message}})
        return MissReply(status or 404, (("content-type", "application/json"), *retry), body)
    reply = error_encoder(route)(ErrorKind.INVALID_REQUEST, message)
    return MissReply(status or reply.status, (*reply.headers.items(), *retry), reply.body)


def jsonrpc_miss_reply(request_id: Any, message: str) -> MissReply:
    """The answer to a tool server's or agent's JSON-RPC request nothing answers: its JSON-RPC error."""
    error = {"code": NOT_RECORDED, "message": f"llmproxy: {message}"}
    body = orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})
    return MissReply(200, (("content-type", "application/json"), MISS_HEADER), body)
