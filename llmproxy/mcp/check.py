"""`llmproxy mcp-check`: the protocol checks MockServer's `run_mcp_contract_test` describes, run against an MCP
server over Streamable HTTP or stdio — initialize, version negotiation, the initialized notification, ping,
an unknown method, a body that is not JSON, session ids, tools/list (each schema a valid JSON Schema), a call
of each tool that says it only reads (arguments made from its inputSchema, the result checked against its
outputSchema), resources/list and prompts/list when offered. Each check passes, fails or is skipped (what it
needs is not there), with one line saying why.

Tools are called only when safe: by default those annotated `readOnlyHint`, as a tool that changes the
world must not be called by a checker with made-up arguments; `all` calls every tool, `none` none.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

import jsonschema

from llmproxy.jsonrpc import METHOD_NOT_FOUND, PARSE_ERROR
from llmproxy.mcp import protocol
from llmproxy.mcp.connection import SHORT, Answer, Connection, Opener

UNSUPPORTED_VERSION: Final = "1999-01-01"
CLIENT: Final = {"name": "llmproxy mcp-check", "version": "1"}


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


class CallTools(StrEnum):
    READ_ONLY = "read-only"
    ALL = "all"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Checked:
    name: str
    outcome: Outcome
    detail: str


def _request(request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def _initialize(request_id: int, version: str) -> dict[str, Any]:
    return _request(request_id, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT})


def _said(answer: Answer, request_id: object) -> tuple[dict[str, Any] | None, str]:
    """The answer's message, or what went wrong instead."""
    if answer.problem is not None:
        return None, answer.problem
    found = answer.response(request_id)
    if found is None:
        status = f"HTTP {answer.status} with " if answer.status is not None else ""
        return None, f"{status}no answer to request {request_id}"
    return found, ""


def _result(answer: Answer, request_id: object) -> tuple[dict[str, Any] | None, str]:
    found, why = _said(answer, request_id)
    if found is None:
        return None, why
    if "error" in found:
        error = found["error"] if isinstance(found["error"], dict) else {}
        return None, f"a JSON-RPC error {error.get('code')}: {error.get('message')}"
    result = found.get("result")
    return (result, "") if isinstance(result, dict) else (None, f"a result that is not an object: {result!r:.60}")


class Checker:
    def __init__(self, opener: Opener, call_tools: CallTools = CallTools.READ_ONLY) -> None:
        self.opener = opener
        self.call_tools = call_tools
        self._ids = iter(range(1, 1_000_000))

    def run(self) -> list[Checked]:
        connection = self.opener.open()
        try:
            return list(self._checks(connection))
        finally:
            connection.close()

    def _next(self) -> int:
        return next(self._ids)

    def _checks(self, connection: Connection) -> Iterator[Checked]:
        request_id = self._next()
        result, why = _result(connection.send(_initialize(request_id, protocol.LATEST)), request_id)
        initialized = result is not None and _initialize_problem(result) is None
        if result is None or not initialized:
            yield Checked("initialize", Outcome.FAIL, why or str(_initialize_problem(result or {})))
            yield Checked("the other checks", Outcome.SKIP, "they need an initialized session")
            return
        version = result["protocolVersion"]
        capabilities = result.get("capabilities") or {}
        name = result["serverInfo"]["name"]
        yield Checked("initialize", Outcome.PASS, f"{name}, MCP {version}")
        yield self._negotiation(version)
        yield self._initialized(connection)
        yield self._ping(connection)
        yield self._unknown_method(connection)
        yield self._not_json(connection)
        yield from self._sessions(connection)
        if "tools" in capabilities:
            yield from self._tools(connection)
        else:
            yield Checked("tools/list", Outcome.SKIP, "the server offers no tools")
        for method, key, capability in (
            ("resources/list", "resources", "resources"),
            ("prompts/list", "prompts", "prompts"),
        ):
            if capability in capabilities:
                yield self._listed(connection, method, key)
            else:
                yield Checked(method, Outcome.SKIP, f"the server offers no {capability}")

    def _negotiation(self, agreed: str) -> Checked:
        name = "version negotiation"
        if agreed not in protocol.VERSIONS:
            return Checked(name, Outcome.FAIL, f"asked for {protocol.LATEST}, agreed on {agreed!r}: no MCP revision")
        fresh = self.opener.open()
        try:
            request_id = self._next()
            result, why = _result(fresh.send(_initialize(request_id, UNSUPPORTED_VERSION)), request_id)
        finally:
            fresh.close()
        if result is None:
            return Checked(name, Outcome.FAIL, f"asked for {UNSUPPORTED_VERSION}: {why} (it should offer its own)")
        offered = result.get("protocolVersion")
        if offered not in protocol.VERSIONS:
            return Checked(name, Outcome.FAIL, f"asked for {UNSUPPORTED_VERSION}, offered {offered!r}")
        return Checked(name, Outcome.PASS, f"{protocol.LATEST} → {agreed}; {UNSUPPORTED_VERSION} → {offered}")

    def _initialized(self, connection: Connection) -> Checked:
        name = "notifications → 202" if connection.transport == "http" else "notifications unanswered"
        answer = connection.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if connection.transport == "stdio":
            return Checked(name, Outcome.PASS, "notifications/initialized sent; nothing is to answer it")
        if answer.status == 202:
            return Checked(name, Outcome.PASS, "notifications/initialized: 202")
        return Checked(name, Outcome.FAIL, f"notifications/initialized: HTTP {answer.status} (202 expected)")

    def _ping(self, connection: Connection) -> Checked:
        request_id = self._next()
        result, why = _result(connection.send(_request(request_id, "ping")), request_id)
        if result is None:
            return Checked("ping", Outcome.FAIL, why)
        stray = _stdio_strays(connection)
        if stray:
            return Checked("ping", Outcome.FAIL, f"answered, after lines that are not JSON-RPC: {stray[0]!r:.60}")
        return Checked("ping", Outcome.PASS, "an empty result" if result == {} else f"a result: {result!r:.60}")

    def _unknown_method(self, connection: Connection) -> Checked:
        name = f"unknown method → {METHOD_NOT_FOUND}"
        request_id = self._next()
        found, why = _said(connection.send(_request(request_id, "llmproxy/no-such-method", {})), request_id)
        if found is None:
            return Checked(name, Outcome.FAIL, why)
        code = (found.get("error") or {}).get("code") if isinstance(found.get("error"), dict) else None
        if code == METHOD_NOT_FOUND:
            return Checked(name, Outcome.PASS, "llmproxy/no-such-method: -32601")
        return Checked(name, Outcome.FAIL, f"llmproxy/no-such-method: {found!r:.80}")

    def _not_json(self, connection: Connection) -> Checked:
        name = f"not JSON → {PARSE_ERROR}"
        answer = connection.send(None, raw=b"{this is not JSON", wait=SHORT)
        codes = [
            m["error"].get("code") for m in answer.messages if isinstance(m, dict) and isinstance(m.get("error"), dict)
        ]
        if PARSE_ERROR in codes:
            status = f"HTTP {answer.status}, " if answer.status is not None else ""
            return Checked(name, Outcome.PASS, f"{status}-32700")
        if answer.status == 400:
            return Checked(name, Outcome.PASS, "HTTP 400")
        return Checked(name, Outcome.FAIL, answer.problem or f"HTTP {answer.status}, {answer.messages!r:.60}")

    def _sessions(self, connection: Connection) -> Iterator[Checked]:
        if connection.transport != "http":
            yield Checked("session ids", Outcome.SKIP, "stdio: the process is the session")
            return
        session = getattr(connection, "session", None)
        if not session:
            yield Checked("session ids", Outcome.SKIP, "a stateless server: initialize gave no Mcp-Session-Id")
            return
        checks: tuple[tuple[str, str, int], ...] = (
            ("without its session id → 400", "", 400),
            ("an unknown session id → 404", "llmproxy-mcp-check-no-such-session", 404),
        )
        for name, value, expected in checks:
            request_id = self._next()
            answer = connection.send(_request(request_id, "ping"), headers={protocol.SESSION_HEADER: value})
            outcome = Outcome.PASS if answer.status == expected else Outcome.FAIL
            yield Checked(name, outcome, f"ping: HTTP {answer.status}" if answer.problem is None else answer.problem)

    def _tools(self, connection: Connection) -> Iterator[Checked]:
        request_id = self._next()
        result, why = _result(connection.send(_request(request_id, "tools/list", {})), request_id)
        if result is None or not isinstance(result.get("tools"), list):
            yield Checked("tools/list", Outcome.FAIL, why or "no tools list in its result")
            return
        tools = [tool for tool in result["tools"] if isinstance(tool, dict)]
        problems = [problem for tool in tools for problem in _tool_problems(tool)]
        names = [str(tool.get("name")) for tool in tools]
        problems += [f"{name}: listed twice" for name in sorted({n for n in names if names.count(n) > 1})]
        if problems:
            yield Checked("tools/list", Outcome.FAIL, "; ".join(problems))
            return
        yield Checked("tools/list", Outcome.PASS, f"{len(tools)} tools, every schema valid")
        for tool in tools:
            yield self._call(connection, tool)

    def _call(self, connection: Connection, tool: dict[str, Any]) -> Checked:
        name = f"tools/call {tool['name']}"
        read_only = bool((tool.get("annotations") or {}).get("readOnlyHint"))
        if self.call_tools is CallTools.NONE or (self.call_tools is CallTools.READ_ONLY and not read_only):
            why = "--call-tools none" if self.call_tools is CallTools.NONE else "not annotated readOnlyHint"
            return Checked(name, Outcome.SKIP, why)
        arguments = sample(tool.get("inputSchema") or {"type": "object"})
        request_id = self._next()
        params = {"name": tool["name"], "arguments": arguments}
        result, why = _result(connection.send(_request(request_id, "tools/call", params)), request_id)
        if result is None:
            return Checked(name, Outcome.FAIL, f"with {arguments}: {why}")
        if not isinstance(result.get("content"), list):
            return Checked(name, Outcome.FAIL, f"with {arguments}: a result without a content list")
        if result.get("isError"):
            return Checked(name, Outcome.PASS, f"with {arguments}: a tool error (isError), as the protocol has it")
        output = tool.get("outputSchema")
        if isinstance(output, dict):
            structured = result.get("structuredContent")
            if structured is None:
                return Checked(name, Outcome.FAIL, f"with {arguments}: no structuredContent, yet an outputSchema")
            try:
                jsonschema.validate(structured, output)
            except jsonschema.ValidationError as error:
                return Checked(name, Outcome.FAIL, f"structuredContent fails its outputSchema: {error.message}")
        return Checked(name, Outcome.PASS, f"with {arguments}: {len(result['content'])} content blocks")

    def _listed(self, connection: Connection, method: str, key: str) -> Checked:
        request_id = self._next()
        result, why = _result(connection.send(_request(request_id, method, {})), request_id)
        if result is None:
            return Checked(method, Outcome.FAIL, why)
        listed = result.get(key)
        if not isinstance(listed, list) or not all(isinstance(item, dict) and "name" in item for item in listed):
            return Checked(method, Outcome.FAIL, f"its result has no list of {key}, each with a name")
        return Checked(method, Outcome.PASS, f"{len(listed)} {key}")


def _stdio_strays(connection: Connection) -> list[str]:
    stray: list[str] = getattr(connection, "stray", [])
    return stray


def _initialize_problem(result: dict[str, Any]) -> str | None:
    if not isinstance(result.get("protocolVersion"), str):
        return "its result has no protocolVersion"
    if not isinstance(result.get("capabilities"), dict):
        return "its result has no capabilities"
    info = result.get("serverInfo")
    if not isinstance(info, dict) or not isinstance(info.get("name"), str):
        return "its result has no serverInfo with a name"
    return None


def _tool_problems(tool: dict[str, Any]) -> Iterator[str]:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        yield f"a tool without a name: {tool!r:.60}"
        return
    for key in ("inputSchema", "outputSchema"):
        schema = tool.get(key)
        if schema is None:
            if key == "inputSchema":
                yield f"{name}: no inputSchema"
            continue
        if not isinstance(schema, dict) or schema.get("type") != "object":
            yield f"{name}: its {key} is not an object schema"
            continue
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as error:
            yield f"{name}: its {key} is not a valid JSON Schema: {error.message}"


_SAMPLES: Final[dict[str, Callable[[dict[str, Any]], Any]]] = {
    "string": lambda schema: "example",
    "integer": lambda schema: int(schema.get("minimum", 1)),
    "number": lambda schema: schema.get("minimum", 1),
    "boolean": lambda schema: True,
    "array": lambda schema: [],
    "null": lambda schema: None,
}


def sample(schema: dict[str, Any]) -> Any:
    """Arguments that meet a simple schema: its required properties, each its default, first example or enum
    value, else a plain value of its type."""
    if "default" in schema:
        return schema["default"]
    if schema.get("examples"):
        return schema["examples"][0]
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind != "object":
        return _SAMPLES.get(kind, _SAMPLES["string"])(schema)
    properties = schema.get("properties") or {}
    return {
        key: sample(properties.get(key) or {"type": "string"})
        for key in schema.get("required") or []
        if isinstance(key, str)
    }
