"""JSON-RPC 2.0 messages as MCP uses them (https://www.jsonrpc.org/specification, and the MCP specification's
"Base Protocol": an id is a string or an integer, never null): a parsed value read as a request, a
notification or a response — or as the error that answers it — and the answers written back as plain
objects, ready for `orjson.dumps`."""

from dataclasses import dataclass
from typing import Any, Final

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
RESOURCE_NOT_FOUND: Final = -32002  # MCP's own, for resources/read of a URI the server does not have

type Id = str | int
type JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Request:
    """A request (it has an id and wants an answer) or a notification (`id` None: it gets none)."""

    method: str
    params: JsonObject
    id: Id | None = None

    @property
    def notification(self) -> bool:
        return self.id is None


@dataclass(frozen=True, slots=True)
class Response:
    """A response the peer sent us (to a request of ours): nothing answers it."""

    id: Id | None


class Invalid(Exception):
    """A message that cannot be read: `answer` is the error response to send back."""

    def __init__(self, answer: JsonObject) -> None:
        super().__init__(answer["error"]["message"])
        self.answer = answer


def read(message: Any) -> Request | Response:
    """One JSON-RPC message (already parsed from JSON). Raises Invalid with the error to answer it with."""
    if not isinstance(message, dict):
        raise Invalid(error(None, INVALID_REQUEST, f"a JSON-RPC message is an object, not {_kind(message)}"))
    given = message.get("id")
    known = given if _an_id(given) else None
    if message.get("jsonrpc") != "2.0":
        raise Invalid(error(known, INVALID_REQUEST, 'a JSON-RPC 2.0 message has "jsonrpc": "2.0"'))
    if "method" not in message:
        if "result" in message or "error" in message:
            return Response(known)
        raise Invalid(error(known, INVALID_REQUEST, "a JSON-RPC message has a method, a result or an error"))
    method = message["method"]
    if not isinstance(method, str):
        raise Invalid(error(known, INVALID_REQUEST, f"the method is a string, not {_kind(method)}"))
    if "id" in message and not _an_id(given):
        raise Invalid(error(None, INVALID_REQUEST, f"a request id is a string or an integer, not {_kind(given)}"))
    params = message.get("params")
    if params is None:
        params = {}
    elif not isinstance(params, dict):
        raise Invalid(error(known, INVALID_PARAMS, f"{method}: params is an object, not {_kind(params)}"))
    return Request(method, params, known)


def result(id: Id, value: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "id": id, "result": value}


def error(id: Id | None, code: int, message: str, data: Any = None) -> JsonObject:
    body: JsonObject = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": body}


def notification(method: str, params: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def progress_token(message: Any) -> object | None:
    """The token a request asks its progress notifications under (`params._meta.progressToken`), if any."""
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


def with_progress_token(message: Any, token: object | None) -> Any:
    """`message` as a server writes it to a request that asked progress under `token`: a progress notification
    under that token. A recorded server's were written for the recorded request's token, which a client that
    makes a fresh one each run (the Gemini CLI) no longer knows."""
    if token is None or not isinstance(message, dict) or message.get("method") != "notifications/progress":
        return message
    params = message.get("params")
    if not isinstance(params, dict) or "progressToken" not in params:
        return message
    return {**message, "params": {**params, "progressToken": token}}


def _an_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(type(value), "a number")
