"""Azure OpenAI's error bodies and headers (docs/providers.md#azure-openai), where they differ from api.openai.com's.

Azure answers its own failures (authentication, RBAC, unknown deployments, rate limits) with
`{"error": {"code": "<status or name>", "message": "…"}}` and no `type`; validation and server errors are
OpenAI's, forwarded. Content-filter refusals are 400s with `code: "content_filter"` and an `innererror`
holding the filter results. Every response carries `apim-request-id` and `x-request-id` (the SDK's
`request_id`). Decoding is OpenAI's: the same reader understands both shapes.
"""

import uuid
from typing import Final

from llmproxy.model import ErrorKind
from llmproxy.providers import openai_errors
from llmproxy.providers.base import ErrorReply, JsonObject, dump_json, retry_after_headers

# kind → (status, code) for the errors Azure words itself; the others are OpenAI's. Quota has no
# documented data-plane code: OpenAI's `insufficient_quota` is used, the code SDK users match on.
_AZURE: Final[dict[ErrorKind, tuple[int, str]]] = {
    ErrorKind.AUTHENTICATION: (401, "401"),
    ErrorKind.PERMISSION: (403, "PermissionDenied"),
    ErrorKind.NOT_FOUND: (404, "DeploymentNotFound"),
    ErrorKind.RATE_LIMIT: (429, "429"),
    ErrorKind.QUOTA_EXCEEDED: (429, "insufficient_quota"),
}
FILTER_CATEGORIES: Final = ("hate", "self_harm", "sexual", "violence")


def request_headers(*parts: object) -> dict[str, str]:
    """`apim-request-id` and `x-request-id`: one deterministic UUID per distinct reply."""
    request_id = str(uuid.uuid5(uuid.NAMESPACE_OID, repr(parts)))
    return {"apim-request-id": request_id, "x-request-id": request_id}


def encode_error(kind: ErrorKind, message: str, *, retry_after: float | None = None) -> ErrorReply:
    if kind not in _AZURE:
        reply = openai_errors.encode_error(kind, message, retry_after=retry_after)
        return ErrorReply(reply.status, {**reply.headers, **request_headers(kind, message)}, reply.body)
    status, code = _AZURE[kind]
    headers = {"content-type": "application/json", **request_headers(kind, message), **retry_after_headers(retry_after)}
    return ErrorReply(status, headers, dump_json({"error": {"code": code, "message": message}}))


def content_filter_error(message: str, filtered: tuple[str, ...] = ("violence",)) -> ErrorReply:
    """The 400 Azure sends when its content filter rejects a prompt: the `filtered` categories at high
    severity, the others safe."""
    results: JsonObject = {
        category: {"filtered": category in filtered, "severity": "high" if category in filtered else "safe"}
        for category in FILTER_CATEGORIES
    }
    error = {
        "message": message,
        "type": None,
        "param": "prompt",
        "code": "content_filter",
        "status": 400,
        "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": results},
    }
    headers = {"content-type": "application/json", **request_headers("content_filter", message, filtered)}
    return ErrorReply(400, headers, dump_json({"error": error}))
