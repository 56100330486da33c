"""The MCP tools of the control plane, made from the REST API's own endpoints (`Router.endpoints`): one tool per
endpoint, its input schema from the endpoint's path-parameter, query and body models, its access (read or
mutate) the endpoint's. A tool call becomes the REST request it stands for (`ControlRequest`), which goes
through the same router with the caller's access — so authentication, validation and errors are the API's.

Where MockServer's MCP server has a tool that means the same, the tool has its name (`NAMES`, one row per
endpoint); an endpoint without a row gets its operation id. A few tools are conveniences built on an endpoint
(`CONVENIENCES`: one expectation, one conversation, an adversarial answer) or on the chaos endpoint, which is
not one of the router's; their arguments are pydantic models too, checked before the request is made.

Pure: nothing here imports the MCP SDK (`llmproxy.control.mcp.server` serves these tools with it).
"""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final
from urllib.parse import quote, urlencode

import pydantic
from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import models_json_schema

from llmproxy.control.auth import Access
from llmproxy.control.router import Endpoint, Router
from llmproxy.intercept import control as chaos
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.mock import spec
from llmproxy.validation_errors import describe


@dataclass(frozen=True, slots=True)
class ControlRequest:
    """A request to the control port: what a tool call stands for."""

    method: str
    target: str  # its path on the control port, with its query
    body: bytes = b""


class InvalidArguments(ValueError):
    """A tool's arguments cannot make its request: the message names each argument and what is wrong."""


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    access: Access
    endpoint: str  # "POST /llmproxy/api/v1/expectations": what it calls, for people
    input_schema: dict[str, Any]
    request: Callable[[Mapping[str, Any]], ControlRequest]  # raises InvalidArguments


# MockServer's MCP tool names, for the endpoints whose meaning is the same (method, path under the API's base).
# An endpoint not listed here is a tool named by its operation id.
NAMES: Final[Mapping[tuple[str, str], str]] = {
    ("GET", "/status"): "get_status",
    ("POST", "/reset"): "reset",
    ("POST", "/stop"): "stop_server",
    ("POST", "/load"): "load_expectations_from_file",
    ("POST", "/save"): "record_llm_fixtures",
    ("GET", "/journal"): "retrieve_recorded_requests",
    ("GET", "/journal/{seq}"): "retrieve_request_responses",
    ("POST", "/verify/requests"): "verify_request",
    ("POST", "/verify/sequence"): "verify_request_sequence",
    ("POST", "/verify/tool-call"): "verify_tool_call",
    ("POST", "/verify/structured-output"): "verify_structured_output",
    ("POST", "/verify/cost"): "verify_cost_budget",
    ("POST", "/verify/drift"): "detect_llm_drift",
    ("GET", "/misses"): "explain_unmatched_requests",
    ("POST", "/misses/debug"): "debug_request_mismatch",
    ("GET", "/report"): "export_optimisation_report",
    ("GET", "/explain"): "explain_agent_run",
    ("GET", "/expectations"): "retrieve_active_expectations",
    ("POST", "/expectations"): "create_expectation",
    ("DELETE", "/expectations"): "clear_expectations",
    ("GET", "/mcp-servers"): "list_mock_tools",
    ("GET", "/a2a-agents"): "list_mock_agents",  # MockServer has none: named after list_mock_tools
}


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _TestScoped(_Arguments):
    testId: str | None = Field(
        default=None,
        min_length=1,
        description="added for this test: answers only requests sent with it in the x-llmproxy-test-id header",
    )


class OneExpectation(spec.Expectation):
    """One expectation, as an entry of the expectations file."""

    testId: str | None = Field(
        default=None,
        min_length=1,
        description="added for this test: answers only requests sent with it in the x-llmproxy-test-id header",
    )


class OneConversation(spec.ConversationSpec):
    """A conversation of turns, as the expectations file's `conversation`."""

    priority: int = Field(default=0, description="higher first; equal priorities in the order added")
    testId: str | None = Field(
        default=None,
        min_length=1,
        description="added for this test: answers only requests sent with it in the x-llmproxy-test-id header",
    )


class AdversarialAnswer(_TestScoped):
    match: spec.Match = Field(default_factory=spec.Match, description="as an expectation's match; {}: any request")
    payload: spec.Adversarial = Field(description="which hostile or malformed answer, from the catalogue")
    times: int | None = Field(default=None, ge=1, description="how many requests it answers; unset: any number")
    priority: int = Field(default=0, description="higher first; equal priorities in the order added")


class NoArguments(_Arguments):
    pass


class ChaosHost(_Arguments):
    host: str = Field(min_length=1, description="a host name, or host:port")


class ChaosSet(ChaosHost):
    chaos: ChaosProfile
    ttlMillis: int | None = Field(default=None, ge=1, description="removed after this many milliseconds")


class ChaosPatch(ChaosHost):
    chaos: dict[str, Any] = Field(description="merged into the host's profile (RFC 7396: null removes a field)")


type Build = Callable[[Any], tuple[dict[str, str], Any]]  # the checked arguments → the query and the JSON body


@dataclass(frozen=True, slots=True)
class Convenience:
    """A tool built on an endpoint: its own arguments, made into that endpoint's request."""

    name: str
    method: str
    path: str  # on the control port: under the API's base, or the chaos endpoint's
    description: str
    arguments: type[BaseModel]
    build: Build
    access: Access | None = None  # None: the endpoint's; an endpoint the router does not serve: this, else mutate


def _one_expectation(arguments: OneExpectation) -> tuple[dict[str, str], Any]:
    entry = arguments.model_dump(mode="json", exclude_unset=True, exclude={"testId"})
    return _scope(arguments.testId), {"expectations": [entry]}


def _one_conversation(arguments: OneConversation) -> tuple[dict[str, str], Any]:
    conversation = arguments.model_dump(mode="json", exclude_unset=True, exclude={"testId", "priority"})
    entry = {"conversation": conversation, "priority": arguments.priority}
    return _scope(arguments.testId), {"expectations": [entry]}


def _adversarial(arguments: AdversarialAnswer) -> tuple[dict[str, str], Any]:
    entry = arguments.model_dump(mode="json", exclude_unset=True, exclude={"testId", "payload"})
    return _scope(arguments.testId), {"expectations": [entry | {"adversarial": arguments.payload.value}]}


def _scope(test_id: str | None) -> dict[str, str]:
    return {"testId": test_id} if test_id is not None else {}


def _nothing(arguments: BaseModel) -> tuple[dict[str, str], Any]:
    return {}, None


def _chaos_body(arguments: BaseModel) -> tuple[dict[str, str], Any]:
    return {}, arguments.model_dump(mode="json", exclude_unset=True, by_alias=True)


def _chaos_host(arguments: ChaosHost) -> tuple[dict[str, str], Any]:
    return {"host": arguments.host}, None


EXPECTATIONS: Final = "/llmproxy/api/v1/expectations"
CONVENIENCES: Final[Sequence[Convenience]] = (
    Convenience(
        "mock_llm_completion",
        "POST",
        EXPECTATIONS,
        "Add one expectation: the answer (respond, error, script…) to requests that hold to its match",
        OneExpectation,
        _one_expectation,
    ),
    Convenience(
        "create_llm_conversation",
        "POST",
        EXPECTATIONS,
        "Add a scripted conversation: each turn answers the request at its point in the conversation, "
        "optionally per session (isolateBy)",
        OneConversation,
        _one_conversation,
    ),
    Convenience(
        "mock_adversarial_llm_response",
        "POST",
        EXPECTATIONS,
        "Answer requests that hold to the match with a hostile or malformed answer from the catalogue "
        "(prompt injection, jailbreak persona, data exfiltration, malformed JSON, empty, over-long), to test that "
        "an agent resists it",
        AdversarialAnswer,
        _adversarial,
    ),
    Convenience(
        "get_chaos",
        "GET",
        chaos.PATH,
        "The chaos now: each host's profile and what is left of its TTL, the rules, faults injected by kind, the "
        "budget",
        NoArguments,
        _nothing,
        Access.READ,
    ),
    Convenience(
        "set_chaos",
        "PUT",
        chaos.PATH,
        "Give a host a chaos profile (replacing its own), for ttlMillis when given",
        ChaosSet,
        _chaos_body,
        Access.MUTATE,
    ),
    Convenience(
        "patch_chaos",
        "PATCH",
        chaos.PATH,
        "Merge fields into a host's chaos profile, keeping its TTL",
        ChaosPatch,
        _chaos_body,
        Access.MUTATE,
    ),
    Convenience(
        "remove_chaos", "DELETE", chaos.PATH, "Remove a host's chaos profile", ChaosHost, _chaos_host, Access.MUTATE
    ),
    Convenience("clear_chaos", "DELETE", chaos.PATH, "Remove every host's chaos profile", NoArguments, _nothing),
)


def tools(router: Router) -> list[Tool]:
    """Every tool: one per endpoint of `router`, then the conveniences. Raises ValueError when two would have the
    same name (a row of `NAMES` or a convenience clashing with another), which tests catch."""
    # a stream (the event stream) is no tool: a tool call answers once
    made = [_endpoint_tool(router.base, endpoint) for endpoint in router.endpoints if not endpoint.streamed]
    served = {(endpoint.method, router.base + endpoint.path): endpoint for endpoint in router.endpoints}
    made += [_convenience_tool(convenience, served) for convenience in CONVENIENCES]
    names = [tool.name for tool in made]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise ValueError(f"two MCP tools would be named {', '.join(doubled)}")
    return made


def tool_name(endpoint: Endpoint) -> str:
    return NAMES.get((endpoint.method, endpoint.path), endpoint.operation_id)


def _endpoint_tool(base: str, endpoint: Endpoint) -> Tool:
    parts: list[tuple[type[BaseModel], str | None]] = [
        (model, None) for model in (endpoint.params, endpoint.query) if model is not None
    ]
    flat = {name for model, _ in parts for name in _names(model)}
    body_key = None
    if endpoint.body is not None:
        # the body's fields are the tool's own arguments, unless one has the name of a parameter's
        body_key = "body" if flat & _names(endpoint.body) or "body" in flat else None
        parts.append((endpoint.body, body_key))
    name = tool_name(endpoint)
    access = endpoint.access
    return Tool(
        name,
        f"{endpoint.summary}. {_said(access)}",
        access,
        f"{endpoint.method} {base}{endpoint.path}",
        _schema(parts),
        lambda arguments: _endpoint_request(base, endpoint, body_key, name, arguments),
    )


def _convenience_tool(convenience: Convenience, served: Mapping[tuple[str, str], Endpoint]) -> Tool:
    endpoint = served.get((convenience.method, convenience.path))
    access = endpoint.access if endpoint is not None else convenience.access or Access.MUTATE

    def request(arguments: Mapping[str, Any]) -> ControlRequest:
        try:
            checked = convenience.arguments.model_validate(dict(arguments))
        except pydantic.ValidationError as error:
            raise InvalidArguments(_problems(convenience.name, describe(error, dict(arguments)))) from None
        query, body = convenience.build(checked)
        data = json.dumps(body).encode() if body is not None else b""
        return ControlRequest(convenience.method, _target(convenience.path, query), data)

    return Tool(
        convenience.name,
        f"{convenience.description}. {_said(access)}",
        access,
        f"{convenience.method} {convenience.path}",
        _schema([(convenience.arguments, None)]),
        request,
    )


def _said(access: Access) -> str:
    return "Only reads." if access is Access.READ else "Changes the run: the read-only token cannot call it."


def _names(model: type[BaseModel]) -> set[str]:
    """The names an argument of `model` may have: its fields' aliases (the wire's) and names."""
    return {field.alias or name for name, field in model.model_fields.items()} | set(model.model_fields)


def _endpoint_request(
    base: str, endpoint: Endpoint, body_key: str | None, name: str, arguments: Mapping[str, Any]
) -> ControlRequest:
    given = dict(arguments)
    params = {key: given.pop(key) for key in list(given) if endpoint.params and key in _names(endpoint.params)}
    query = {key: given.pop(key) for key in list(given) if endpoint.query and key in _names(endpoint.query)}
    body: Any = None
    if endpoint.body is not None:
        if body_key is not None:
            body = given.pop(body_key, {})
        else:
            body = {key: given.pop(key) for key in list(given) if key in _names(endpoint.body)}
    if given:
        known = sorted(
            {n for model in (endpoint.params, endpoint.query) if model for n in _names(model)}
            | ({body_key} if body_key else set(_names(endpoint.body)) if endpoint.body else set())
        )
        takes = f"it takes {', '.join(known)}" if known else "it takes none"
        raise InvalidArguments(_problems(name, [f"$.{key}: not an argument of {name}: {takes}" for key in given]))
    path = endpoint.path
    for segment in endpoint.segments:
        if segment.startswith("{") and segment.endswith("}"):
            key = segment[1:-1]
            if key not in params:
                raise InvalidArguments(_problems(name, [f"$.{key}: required"]))
            path = path.replace(segment, quote(_text(params[key]), safe=""))
    data = json.dumps(body).encode() if body is not None else b""
    return ControlRequest(
        endpoint.method, _target(base + path, {key: _text(value) for key, value in query.items()}), data
    )


def _target(path: str, query: Mapping[str, str]) -> str:
    return f"{path}?{urlencode(query)}" if query else path


def _text(value: Any) -> str:
    """An argument as a path or query parameter spells it (the router parses it back with the same model)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, str | int | float):
        return str(value)
    return json.dumps(value)


def _problems(name: str, lines: Sequence[str]) -> str:
    return f"invalid arguments for {name}: " + "; ".join(lines)


def _schema(parts: Sequence[tuple[type[BaseModel], str | None]]) -> dict[str, Any]:
    """One object schema of the models' fields (a model with a key: as that one argument), the definitions they
    share under `$defs`."""
    if not parts:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    schemas, definitions = models_json_schema(
        [(model, "validation") for model, _ in parts], by_alias=True, ref_template="#/$defs/{model}"
    )
    defs: dict[str, Any] = definitions.get("$defs", {})
    properties: dict[str, Any] = {}
    required: list[str] = []
    for model, key in parts:
        schema = schemas[(model, "validation")]
        if key is not None:
            properties[key] = schema
            required.append(key)
            continue
        if "$ref" in schema:
            schema = defs[schema["$ref"].rsplit("/", 1)[1]]
        properties |= schema.get("properties", {})
        required += schema.get("required", [])
    document: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        document["required"] = required
    used = _referenced({"properties": properties}, defs)
    if used:
        document["$defs"] = {name: defs[name] for name in sorted(used)}
    return document


def _referenced(node: Any, defs: Mapping[str, Any]) -> set[str]:
    """The definitions `node` refers to, and those they refer to in turn."""
    found: set[str] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, dict):
            ref = current.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.rsplit("/", 1)[1]
                if name not in found:
                    found.add(name)
                    pending.append(defs[name])
            pending.extend(value for key, value in current.items() if key != "$ref")
        elif isinstance(current, list):
            pending.extend(current)
    return found
