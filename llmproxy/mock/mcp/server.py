"""What a mock MCP server answers to each message, whatever carries it (Streamable HTTP, stdio): the lifecycle
(`initialize`, its version negotiated, `notifications/initialized`, `ping`), tools (`tools/list`, `tools/call`
with its arguments checked against the tool's inputSchema), resources (`resources/list`, `…/templates/list`,
`resources/read`, `…/subscribe`), prompts (`prompts/list`, `prompts/get`), `completion/complete` and
`logging/setLevel`, as the MCP specification (2025-06-18, 2025-11-25) has a server answer them.

A protocol error is the protocol's own: -32601 for a method the server does not have, -32602 for params it
cannot take (an unknown tool or prompt, a required prompt argument missing, arguments failing the tool's
inputSchema before 2025-11-25), -32002 for a resource it does not have. Everything is decided from the
message and the session's state; nothing here knows HTTP or pipes.
"""

import re
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import orjson

from llmproxy import jsonrpc
from llmproxy.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, JsonObject
from llmproxy.mcp import protocol
from llmproxy.mock.mcp import spec
from llmproxy.mock.mcp.tools import ToolResults

_COMPLETIONS = 100  # values completion/complete sends at most (the specification's limit)


@dataclass(slots=True)
class McpSession:
    """What one client's session holds: the version agreed, the log level it asked for, what it subscribed to."""

    id: str | None = None
    version: str = protocol.ASSUMED
    initialized: bool = False
    level: str | None = None
    subscriptions: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Answered:
    """What one message gets: the `response` (None for a notification), the notifications sent before it,
    `interval` seconds apart (and before the response); for the log, what was asked (`said`), which part of the
    definition answered (`by`: "result 2", "template test://items/{id}"), and `missed` when the mock had nothing
    scripted for it: a tool call no result matches. A protocol error is an answer, not a miss (an SDK client
    probes for methods a server may not have)."""

    response: JsonObject | None
    before: tuple[JsonObject, ...] = ()
    interval: float = 0.0
    said: str = ""
    by: str = ""
    missed: str | None = None
    invalid: bool = False  # the message was not JSON-RPC: its response is the error saying so


@dataclass(frozen=True, slots=True)
class ToolStanding:
    """One tool as `tools/list` lists it, with the calls it has had: every `tools/call` naming it (`calls`,
    whatever it got), and how many each of its results answered (`served`, in the file's order)."""

    listed: JsonObject
    calls: int
    served: tuple[int, ...]


class McpServerMock:
    """One server of the file, its answers made once: listings, tools' validators, templates' patterns."""

    def __init__(self, definition: spec.McpServer) -> None:
        self.definition = definition
        self.name = definition.name
        self._calls: Counter[str] = Counter()
        self._calls_lock = threading.Lock()
        self._tools = {tool.name: tool for tool in definition.tools}
        self._validators = {
            tool.name: jsonschema.validators.validator_for(tool.inputSchema)(tool.inputSchema)
            for tool in definition.tools
        }
        self._results = {tool.name: ToolResults(tool) for tool in definition.tools}
        self._resources = {resource.uri: resource for resource in definition.resources}
        self._templates = [
            (_template_pattern(template.uriTemplate), template) for template in definition.resourceTemplates
        ]
        self._prompts = {prompt.name: prompt for prompt in definition.prompts}
        self._listed = {
            "tools/list": {"tools": [_listed(tool, exclude={"results"}) for tool in definition.tools]},
            "resources/list": {
                "resources": [_listed(resource, exclude={"text", "blob"}) for resource in definition.resources]
            },
            "resources/templates/list": {
                "resourceTemplates": [
                    _listed(template, exclude={"text", "blob", "completions"})
                    for template in definition.resourceTemplates
                ]
            },
            "prompts/list": {
                "prompts": [
                    _listed(prompt, exclude={"messages", "arguments"})
                    | (
                        {"arguments": [_listed(a, exclude={"completions"}) for a in prompt.arguments]}
                        if prompt.arguments
                        else {}
                    )
                    for prompt in definition.prompts
                ]
            },
        }
        self._handlers = {
            "initialize": self._initialize,
            "ping": _empty,
            "tools/call": self._call_tool,
            "resources/read": self._read_resource,
            "resources/subscribe": _subscribe,
            "resources/unsubscribe": _unsubscribe,
            "prompts/get": self._get_prompt,
            "completion/complete": self._complete,
            "logging/setLevel": _set_level,
        }

    @property
    def listed(self) -> Mapping[str, JsonObject]:
        """What `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list` answer, by method."""
        return self._listed

    def tools_standing(self) -> list[ToolStanding]:
        with self._calls_lock:
            calls = dict(self._calls)
        return [
            ToolStanding(listed, calls.get(listed["name"], 0), self._results[listed["name"]].served())
            for listed in self._listed["tools/list"]["tools"]
        ]

    def answer_message(self, message: Any, session: McpSession) -> Answered:
        """Any JSON value received: a request answered, a notification or a response taken, anything else the
        JSON-RPC error saying what it is not."""
        try:
            read = jsonrpc.read(message)
        except jsonrpc.Invalid as problem:
            return Answered(problem.answer, said=f"invalid message: {problem}", invalid=True)
        if isinstance(read, jsonrpc.Response):
            return Answered(None, said="a response")
        return self.answer(read, session)

    def answer(self, request: jsonrpc.Request, session: McpSession) -> Answered:
        method = request.method
        if request.notification:
            if method == "notifications/initialized":
                session.initialized = True
            return Answered(None, said=method)
        assert request.id is not None
        listed = self._listed.get(method)
        if listed is not None:
            if request.params.get("cursor") is not None:
                return _error(request, INVALID_PARAMS, f"{method}: invalid cursor: this server lists all on one page")
            return Answered(jsonrpc.result(request.id, listed), said=method)
        handler = self._handlers.get(method)
        if handler is None:
            return _error(request, METHOD_NOT_FOUND, f"method not found: {method}")
        try:
            return handler(request, session)
        except _InvalidParams as error:
            return _error(request, INVALID_PARAMS, str(error), said=error.said)

    def capabilities(self) -> JsonObject:
        definition = self.definition
        offered: JsonObject = {"logging": {}}
        if definition.prompts or definition.resourceTemplates:
            offered["completions"] = {}
        if definition.tools:
            offered["tools"] = {"listChanged": False}
        if definition.resources or definition.resourceTemplates:
            offered["resources"] = {"subscribe": True, "listChanged": False}
        if definition.prompts:
            offered["prompts"] = {"listChanged": False}
        return offered

    def _initialize(self, request: jsonrpc.Request, session: McpSession) -> Answered:
        requested = request.params.get("protocolVersion")
        if not isinstance(requested, str):
            raise _InvalidParams("initialize: protocolVersion is a string, and it is missing")
        session.version = protocol.negotiated(requested)
        info: JsonObject = {"name": self.name, "version": self.definition.version}
        if self.definition.title is not None:
            info["title"] = self.definition.title
        result: JsonObject = {
            "protocolVersion": session.version,
            "capabilities": self.capabilities(),
            "serverInfo": info,
        }
        if self.definition.instructions is not None:
            result["instructions"] = self.definition.instructions
        assert request.id is not None
        return Answered(jsonrpc.result(request.id, result), said="initialize")

    def _call_tool(self, request: jsonrpc.Request, session: McpSession) -> Answered:
        tool, said = _named(request, self._tools, "tool")
        name = tool.name
        with self._calls_lock:
            self._calls[name] += 1
        arguments = request.params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _InvalidParams(f"tools/call {name}: arguments is an object", said)
        assert request.id is not None
        failure = jsonschema.exceptions.best_match(self._validators[name].iter_errors(arguments))
        if failure is not None:
            why = f"invalid arguments for tool {name}: " + " ".join(f"{failure.json_path}: {failure.message}".split())
            if not protocol.tool_input_errors_are_results(session.version):
                raise _InvalidParams(why, said)
            return Answered(jsonrpc.result(request.id, _tool_error(why)), said=said, by="inputSchema")
        picked = self._results[name].pick(arguments)
        if isinstance(picked, str):
            return Answered(jsonrpc.result(request.id, _tool_error(picked)), said=said, missed=picked)
        return self._picked(request, session, picked, said)

    def _picked(
        self, request: jsonrpc.Request, session: McpSession, picked: tuple[spec.ToolAnswer, str], said: str
    ) -> Answered:
        answer, by = picked
        before = [
            jsonrpc.notification(
                "notifications/message",
                {"level": log.level, "data": log.data} | ({"logger": log.logger} if log.logger is not None else {}),
            )
            for log in answer.log
            if protocol.logged(log.level, session.level)
        ]
        meta = request.params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(token, str | int) and not isinstance(token, bool):
            before += [
                jsonrpc.notification("notifications/progress", {"progressToken": token, **_present(step)})
                for step in answer.progress
            ]
        assert request.id is not None
        if answer.error is not None:
            error = answer.error
            response = jsonrpc.error(request.id, error.code, error.message, error.data)
        else:
            response = jsonrpc.result(request.id, tool_result(answer))
        return Answered(response, tuple(before), answer.intervalMs / 1000, said, by)

    def _read_resource(self, request: jsonrpc.Request, session: McpSession) -> Answered:
        uri = _uri(request)
        said = f"resources/read {uri}"
        assert request.id is not None
        resource = self._resources.get(uri)
        if resource is not None:
            contents = _contents(uri, resource.mimeType, resource.text, resource.blob, {})
            return Answered(jsonrpc.result(request.id, {"contents": [contents]}), said=said)
        for pattern, template in self._templates:
            found = pattern.fullmatch(uri)
            if found is not None:
                contents = _contents(uri, template.mimeType, template.text, template.blob, found.groupdict())
                by = f"template {template.uriTemplate}"
                return Answered(jsonrpc.result(request.id, {"contents": [contents]}), said=said, by=by)
        why = f"resource not found: {uri}"
        return Answered(jsonrpc.error(request.id, RESOURCE_NOT_FOUND, why, {"uri": uri}), said=said)

    def _get_prompt(self, request: jsonrpc.Request, session: McpSession) -> Answered:
        prompt, said = _named(request, self._prompts, "prompt")
        name = prompt.name
        given = request.params.get("arguments") or {}
        if not isinstance(given, dict) or not all(isinstance(value, str) for value in given.values()):
            raise _InvalidParams(f"prompts/get {name}: arguments is an object of strings", said)
        missing = [argument.name for argument in prompt.arguments if argument.required and argument.name not in given]
        if missing:
            raise _InvalidParams(f"prompts/get {name}: missing required argument {', '.join(missing)}", said)
        values = {argument.name: given.get(argument.name, "") for argument in prompt.arguments}
        result: JsonObject = {"messages": [_message(message, values) for message in prompt.messages]}
        if prompt.description is not None:
            result["description"] = prompt.description
        assert request.id is not None
        return Answered(jsonrpc.result(request.id, result), said=said, by=f"prompt {name}")

    def _complete(self, request: jsonrpc.Request, session: McpSession) -> Answered:
        ref, argument = request.params.get("ref"), request.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            raise _InvalidParams("completion/complete: ref and argument (with its name) are objects")
        typed = argument.get("value", "")
        typed = typed if isinstance(typed, str) else ""
        offered: tuple[str, ...]
        if ref.get("type") == "ref/prompt":
            prompt = self._prompts.get(str(ref.get("name")))
            if prompt is None:
                raise _InvalidParams(f"completion/complete: unknown prompt {ref.get('name')!r}")
            named = next((a for a in prompt.arguments if a.name == argument["name"]), None)
            offered = named.completions if named is not None else ()
        elif ref.get("type") == "ref/resource":
            template = next((t for _, t in self._templates if t.uriTemplate == ref.get("uri")), None)
            if template is None:
                raise _InvalidParams(f"completion/complete: unknown resource template {ref.get('uri')!r}")
            offered = template.completions.get(argument["name"], ())
        else:
            raise _InvalidParams(
                f"completion/complete: ref.type is ref/prompt or ref/resource, not {ref.get('type')!r}"
            )
        values = [value for value in offered if value.lower().startswith(typed.lower())]
        completion = {"values": values[:_COMPLETIONS], "total": len(values), "hasMore": len(values) > _COMPLETIONS}
        assert request.id is not None
        said = f"completion/complete {argument['name']}"
        return Answered(jsonrpc.result(request.id, {"completion": completion}), said=said)


def tool_result(answer: spec.ToolAnswer) -> JsonObject:
    """A `tools/call` result: the text block first, then the content blocks; structured content alone is also
    sent as its JSON text, as the specification asks of a tool that returns it."""
    content: list[JsonObject] = []
    if answer.text is not None:
        content.append({"type": "text", "text": answer.text})
    content += [block.model_dump(exclude_none=True) for block in answer.content]
    if not content and answer.structuredContent is not None:
        content.append({"type": "text", "text": orjson.dumps(answer.structuredContent).decode()})
    result: JsonObject = {"content": content}
    if answer.structuredContent is not None:
        result["structuredContent"] = answer.structuredContent
    result["isError"] = answer.isError
    return result


class _InvalidParams(Exception):
    def __init__(self, message: str, said: str = "") -> None:
        super().__init__(message)
        self.said = said


def _error(request: jsonrpc.Request, code: int, message: str, said: str = "") -> Answered:
    assert request.id is not None
    return Answered(jsonrpc.error(request.id, code, message), said=said or request.method)


def _tool_error(why: str) -> JsonObject:
    return {"content": [{"type": "text", "text": why}], "isError": True}


def _empty(request: jsonrpc.Request, session: McpSession) -> Answered:
    assert request.id is not None
    return Answered(jsonrpc.result(request.id, {}), said=request.method)


def _subscribe(request: jsonrpc.Request, session: McpSession) -> Answered:
    session.subscriptions.add(_uri(request))
    return _empty(request, session)


def _unsubscribe(request: jsonrpc.Request, session: McpSession) -> Answered:
    session.subscriptions.discard(_uri(request))
    return _empty(request, session)


def _set_level(request: jsonrpc.Request, session: McpSession) -> Answered:
    level = request.params.get("level")
    if level not in protocol.LOG_LEVELS:
        raise _InvalidParams(f"logging/setLevel: level is one of {', '.join(protocol.LOG_LEVELS)}, not {level!r}")
    session.level = level
    return _empty(request, session)


def _named[T](request: jsonrpc.Request, table: dict[str, T], kind: str) -> tuple[T, str]:
    """The tool or prompt the request names, and what it asked, for the log; invalid params when there is none."""
    name = request.params.get("name")
    if not isinstance(name, str):
        raise _InvalidParams(f"{request.method}: name is a string, and it is missing")
    said = f"{request.method} {name}"
    found = table.get(name)
    if found is None:
        listing = request.method.replace("/get", "/list").replace("/call", "/list")
        raise _InvalidParams(f"unknown {kind} {name!r}: {listing} lists the {len(table)} there are", said)
    return found, said


def _uri(request: jsonrpc.Request) -> str:
    uri = request.params.get("uri")
    if not isinstance(uri, str):
        raise _InvalidParams(f"{request.method}: uri is a string, and it is missing")
    return uri


def _listed(definition: Any, exclude: set[str]) -> JsonObject:
    listed: JsonObject = definition.model_dump(exclude_none=True, exclude=exclude)
    return listed


def _present(step: spec.Progress) -> JsonObject:
    said: JsonObject = step.model_dump(exclude_none=True)
    return said


def _template_pattern(template: str) -> re.Pattern[str]:
    """`test://items/{id}/data` → a pattern whose group `id` takes one path segment."""
    parts = re.split(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", template)
    pattern = "".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>[^/]+)" for index, part in enumerate(parts))
    return re.compile(pattern)


def _filled(text: str, values: dict[str, str]) -> str:
    """`{name}` replaced by its value, for the names given only: other braces (JSON) are left as they are."""
    for name, value in values.items():
        text = text.replace(f"{{{name}}}", value)
    return text


def _contents(uri: str, mime: str | None, text: str | None, blob: str | None, values: dict[str, str]) -> JsonObject:
    contents: JsonObject = {"uri": uri}
    if mime is not None:
        contents["mimeType"] = mime
    if blob is not None:
        contents["blob"] = blob
    else:
        contents["text"] = _filled(text or "", values)
    return contents


def _message(message: spec.PromptMessage, values: dict[str, str]) -> JsonObject:
    return {"role": message.role, "content": _filled_block(message.content.model_dump(exclude_none=True), values)}


def _filled_block(block: JsonObject, values: dict[str, str]) -> JsonObject:
    """A content block with the arguments filled into its text and URIs (an embedded resource's too); base64
    data is left as it is."""
    filled: JsonObject = {}
    for key, value in block.items():
        if isinstance(value, dict):
            filled[key] = _filled_block(value, values)
        elif isinstance(value, str) and key in ("text", "uri", "name", "title"):
            filled[key] = _filled(value, values)
        else:
            filled[key] = value
    return filled
