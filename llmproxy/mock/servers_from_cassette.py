"""The MCP servers and A2A agents a recording talked to, as the expectations file's `mcpServers` and
`a2aAgents` (`llmproxy cassette to-expectations`): MockServer's "expectations from recorded traffic" for tool
servers and agents, so that a run recorded once against real ones is mocked from then on.

An exchange is one of theirs by its shape — a JSON-RPC request of an MCP or A2A method — whatever host it went
to. Exchanges are grouped by the URL they were sent to; each group is one server or agent, named by what it
said of itself (an MCP server's `serverInfo.name`, an A2A agent's card) else by its host.

An MCP server gets what it listed (tools, resources, templates, prompts, `instructions`) and what it answered:
each tool call becomes a result matched on the call's arguments (a sequence when the same arguments got
different results, in the recorded order), each resource read its contents, each prompt the messages of its
first `prompts/get`. A tool listed but never called answers a tool error saying so. Errors the mock makes
itself (arguments failing the inputSchema) are not kept. An A2A agent gets its card's description and skills
and one reply per message sent, matched on its text: the states its task went through (a stream's updates, or
the state a send returned), its artifacts, or the agent's message.

A server reached on a loopback address is given its recorded path only; any other also its `url`, so that a
client configured for the real one reaches the mock through the proxy unchanged.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from llmproxy.cassette.model import Exchange, JsonBody, SseEvent
from llmproxy.mock.a2a import spec as a2a
from llmproxy.mock.a2a import wire
from llmproxy.mock.mcp import spec as mcp
from llmproxy.tool_protocols import AGENT_CARD, MCP_METHODS

type JsonObject = dict[str, Any]

_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
_SCHEMA_ERROR = -32602  # the mock answers arguments failing a tool's inputSchema itself


@dataclass(slots=True)
class _Call:
    """One JSON-RPC request of a recording and what answered it: its result or error, or a stream's results."""

    method: str
    params: JsonObject
    results: list[Any]
    error: JsonObject | None


@dataclass(slots=True)
class _Endpoint:
    url: str
    calls: list[_Call] = field(default_factory=list)
    card: JsonObject | None = None


def servers(
    exchanges: list[Exchange], skipped: Counter[str]
) -> tuple[list[mcp.McpServer], list[a2a.A2aAgent], set[int]]:
    """The MCP servers and A2A agents `exchanges` talked to, and the ids of the exchanges they were made of."""
    mcp_endpoints: dict[str, _Endpoint] = {}
    a2a_endpoints: dict[str, _Endpoint] = {}
    cards: dict[str, JsonObject] = {}
    used: set[int] = set()
    for exchange in exchanges:
        url = exchange.request.url.partition("?")[0]
        if exchange.request.method == "GET" and AGENT_CARD.search(urlsplit(url).path):
            body = _json(exchange.response.body) if exchange.response is not None else None
            if isinstance(body, dict) and isinstance(body.get("name"), str):
                cards[AGENT_CARD.sub("", url)] = body
                used.add(exchange.id)
            continue
        request = _json(exchange.request.body)
        if (
            not isinstance(request, dict)
            or request.get("jsonrpc") != "2.0"
            or not isinstance(request.get("method"), str)
        ):
            continue
        method = request["method"]
        kind = mcp_endpoints if method in MCP_METHODS else a2a_endpoints if wire.verb(method) else None
        if kind is None:
            continue
        used.add(exchange.id)
        if "id" not in request:
            continue  # a notification: nothing answered it
        call = _answered(method, request.get("params"), exchange)
        if call is None:
            skipped["unanswered JSON-RPC request"] += 1
            continue
        kind.setdefault(url, _Endpoint(url)).calls.append(call)
    for url, endpoint in a2a_endpoints.items():
        endpoint.card = cards.get(url) or cards.get(_root(url))
    named: set[str] = set()
    made_servers = [_mcp_server(endpoint, named) for endpoint in mcp_endpoints.values()]
    made_agents = [_a2a_agent(endpoint, named) for endpoint in a2a_endpoints.values()]
    return made_servers, made_agents, used


def _root(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _json(body: Any) -> Any:
    return body.json_ if isinstance(body, JsonBody) else None


def _answered(method: str, params: Any, exchange: Exchange) -> _Call | None:
    response = exchange.response
    if response is None:
        return None
    answers: list[Any] = []
    if response.events:
        answers = [event.data for event in response.events if isinstance(event, SseEvent)]
    else:
        answers = [_json(response.body)]
    results = [answer["result"] for answer in answers if isinstance(answer, dict) and "result" in answer]
    errors = [
        answer["error"] for answer in answers if isinstance(answer, dict) and isinstance(answer.get("error"), dict)
    ]
    if not results and not errors:
        return None
    return _Call(method, params if isinstance(params, dict) else {}, results, errors[0] if errors else None)


def _unique_name(wanted: str, named: set[str]) -> str:
    base = _NAME.sub("-", wanted).strip("-.") or "server"
    name, number = base, 1
    while name in named:
        number += 1
        name = f"{base}-{number}"
    named.add(name)
    return name


def _place(url: str) -> JsonObject:
    parts = urlsplit(url)
    place: JsonObject = {"path": parts.path or "/"}
    if (parts.hostname or "") not in _LOOPBACK:
        place["url"] = url
    return place


# MCP


def _mcp_server(endpoint: _Endpoint, named: set[str]) -> mcp.McpServer:
    first: dict[str, JsonObject] = {}
    for call in endpoint.calls:
        if call.results and isinstance(call.results[-1], dict):
            first.setdefault(call.method, call.results[-1])
    init = first.get("initialize", {})
    given = init.get("serverInfo")
    info: JsonObject = given if isinstance(given, dict) else {}
    name = _unique_name(str(info.get("name") or urlsplit(endpoint.url).hostname or "server"), named)
    definition: JsonObject = {"name": name, **_place(endpoint.url)}
    for key in ("version", "title"):
        if isinstance(info.get(key), str):
            definition[key] = info[key]
    if isinstance(init.get("instructions"), str):
        definition["instructions"] = init["instructions"]
    definition["tools"] = _tools(endpoint.calls, first.get("tools/list", {}))
    definition["resources"] = _resources(endpoint.calls, first.get("resources/list", {}))
    definition["prompts"] = _prompts(endpoint.calls, first.get("prompts/list", {}))
    return mcp.McpServer.model_validate(definition)


def _tools(calls: list[_Call], listed: JsonObject) -> list[JsonObject]:
    tools: dict[str, JsonObject] = {}
    for tool in listed.get("tools", []):
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            tools[tool["name"]] = {key: tool[key] for key in mcp.Tool.model_fields if key in tool and key != "results"}
    answers: dict[str, list[tuple[JsonObject, JsonObject]]] = {}
    for call in calls:
        name = call.params.get("name")
        if call.method != "tools/call" or not isinstance(name, str):
            continue
        if call.error is not None and call.error.get("code") == _SCHEMA_ERROR:
            continue
        given = call.params.get("arguments")
        arguments: JsonObject = given if isinstance(given, dict) else {}
        answer = _tool_answer(call)
        if answer is not None:
            tools.setdefault(name, {"name": name})
            answers.setdefault(name, []).append((arguments, answer))
    for name, tool in tools.items():
        tool["results"] = _results(answers.get(name, [])) or [
            {"isError": True, "text": f"{name} was not called in the recording this mock was made from"}
        ]
    return list(tools.values())


def _tool_answer(call: _Call) -> JsonObject | None:
    if call.error is not None:
        return {"error": {key: call.error[key] for key in ("code", "message", "data") if key in call.error}}
    result = call.results[-1] if call.results else None
    if not isinstance(result, dict):
        return None
    answer: JsonObject = {}
    content = [block for block in result.get("content", []) if isinstance(block, dict)]
    structured = result.get("structuredContent")
    if isinstance(structured, dict):
        answer["structuredContent"] = structured
    if content:
        answer["content"] = content
    if result.get("isError") is True:
        answer["isError"] = True
    if not answer:
        answer["text"] = ""
    return answer


def _results(answers: list[tuple[JsonObject, JsonObject]]) -> list[JsonObject]:
    """One result per distinct arguments, in the order first called: its answer, or a sequence of them."""
    grouped: dict[str, tuple[JsonObject, list[JsonObject]]] = {}
    for arguments, answer in answers:
        key = repr(sorted(arguments.items()))
        grouped.setdefault(key, (arguments, []))[1].append(answer)
    results = []
    for arguments, given in grouped.values():
        match = {"match": {"arguments": arguments}}
        if all(answer == given[0] for answer in given):
            results.append({**match, **given[0]})
        else:
            results.append({**match, "sequence": given})
    return results


def _resources(calls: list[_Call], listed: JsonObject) -> list[JsonObject]:
    resources: dict[str, JsonObject] = {}
    for resource in listed.get("resources", []):
        if isinstance(resource, dict) and isinstance(resource.get("uri"), str):
            kept = {key: resource[key] for key in mcp.Resource.model_fields if key in resource}
            resources[resource["uri"]] = {"name": resource["uri"], **kept}
    for call in calls:
        if call.method != "resources/read" or not call.results or not isinstance(call.results[-1], dict):
            continue
        for contents in call.results[-1].get("contents", []):
            uri = contents.get("uri") if isinstance(contents, dict) else None
            if isinstance(uri, str) and uri not in resources:  # read, never listed
                mime = {"mimeType": contents["mimeType"]} if "mimeType" in contents else {}
                resources[uri] = {"uri": uri, "name": uri, **mime}
            if uri in resources and "text" not in resources[uri] and "blob" not in resources[uri]:
                for key in ("text", "blob"):
                    if isinstance(contents.get(key), str):
                        resources[uri][key] = contents[key]
    return list(resources.values())


def _prompts(calls: list[_Call], listed: JsonObject) -> list[JsonObject]:
    """The prompts fetched (a prompt's messages are only known once it was), as listed, else by the arguments
    they were fetched with."""
    known = {each["name"]: each for each in listed.get("prompts", []) if isinstance(each, dict) and "name" in each}
    prompts: dict[str, JsonObject] = {}
    for call in calls:
        name = call.params.get("name")
        if call.method != "prompts/get" or not isinstance(name, str) or name in prompts or not call.results:
            continue
        result = call.results[-1]
        messages = result.get("messages") if isinstance(result, dict) else None
        if not messages:
            continue
        given = call.params.get("arguments")
        arguments = [{"name": argument} for argument in given] if isinstance(given, dict) else []
        prompt = known.get(name) or {"name": name, "description": result.get("description"), "arguments": arguments}
        kept = {
            key: prompt[key] for key in ("name", "title", "description", "arguments") if prompt.get(key) is not None
        }
        prompts[name] = {**kept, "messages": messages}
    return list(prompts.values())


# A2A


def _a2a_agent(endpoint: _Endpoint, named: set[str]) -> a2a.A2aAgent:
    card = endpoint.card or {}
    name = _unique_name(str(card.get("name") or urlsplit(endpoint.url).hostname or "agent"), named)
    definition: JsonObject = {"name": name, **_place(endpoint.url)}
    for key in ("description", "version", "documentationUrl"):
        if isinstance(card.get(key), str):
            definition[key] = card[key]
    capabilities = card.get("capabilities")
    if isinstance(capabilities, dict) and capabilities.get("streaming") is False:
        definition["streaming"] = False
    definition["skills"] = [
        {key: skill[key] for key in a2a.AgentSkill.model_fields if key in skill}
        for skill in card.get("skills", [])
        if isinstance(skill, dict) and isinstance(skill.get("id"), str) and isinstance(skill.get("name"), str)
    ]
    grouped: dict[str, list[JsonObject]] = {}  # by the text of the message answered, in the order first sent
    for call in endpoint.calls:
        replied = _reply(call)
        if replied is not None:
            grouped.setdefault(replied[0], []).append(replied[1])
    replies = []
    for text, answers in grouped.items():
        match = {"match": {"textContains": text}} if text else {}
        same = all(answer == answers[0] for answer in answers)
        replies.append({**match, **answers[0]} if same else {**match, "sequence": answers})
    definition["replies"] = replies or [{"message": "nothing was sent to this agent in the recording"}]
    return a2a.A2aAgent.model_validate(definition)


def _reply(call: _Call) -> tuple[str, JsonObject] | None:
    """The text of a message sent, and what answered it as a reply's answer; None for any other call."""
    known = wire.verb(call.method)
    if known is None or known[0] not in (wire.Verb.SEND, wire.Verb.STREAM):
        return None
    message = call.params.get("message")
    text = wire.texts(message) if isinstance(message, dict) else ""
    if call.error is not None:
        return text, {"error": {key: call.error[key] for key in ("code", "message", "data") if key in call.error}}
    states: list[JsonObject] = []
    artifacts: list[JsonObject] = []
    for result in call.results:
        kind, value = _unwrapped(result)
        if kind == "message":
            return text, {"message": {"parts": _parts(value)}}
        if kind in ("task", "status-update") and isinstance(value.get("status"), dict):
            states.append(_status(value["status"]))
        if kind == "task":
            artifacts += [_artifact(each) for each in value.get("artifacts", []) if isinstance(each, dict)]
        if kind == "artifact-update" and isinstance(value.get("artifact"), dict):
            artifacts.append(_artifact(value["artifact"]))
    if not states:
        return None
    if len(states) > 1 and states[0] == {"state": "submitted"}:
        states = states[1:]  # the mock streams the task as submitted first itself
    return text, {"states": states, **({"artifacts": artifacts} if artifacts else {})}


_V1_KINDS = {"task": "task", "message": "message", "statusUpdate": "status-update", "artifactUpdate": "artifact-update"}


def _unwrapped(result: Any) -> tuple[str, JsonObject]:
    """A result's kind and object, 0.3's (`kind`) or 1.0's (`{"task": …}`)."""
    if not isinstance(result, dict):
        return "", {}
    if isinstance(result.get("kind"), str):
        return result["kind"], result
    for key, kind in _V1_KINDS.items():
        if isinstance(result.get(key), dict):
            return kind, result[key]
    return "", {}


def _status(status: JsonObject) -> JsonObject:
    state = str(status.get("state", "")).removeprefix("TASK_STATE_").lower().replace("_", "-")
    made: JsonObject = {"state": state}
    message = status.get("message")
    if isinstance(message, dict):
        parts = _parts(message)
        if parts:
            made["parts"] = parts
    return made


def _artifact(artifact: JsonObject) -> JsonObject:
    made: JsonObject = {
        key: artifact[key] for key in ("artifactId", "name", "description", "metadata") if key in artifact
    }
    return {**made, "parts": _parts(artifact)}


def _parts(value: JsonObject) -> list[JsonObject]:
    """A message's or artifact's parts as the file spells them, from either dialect."""
    parts = []
    for part in wire.received({"parts": value.get("parts", [])})["parts"]:
        kind = part.get("kind")
        extra = {"metadata": part["metadata"]} if "metadata" in part else {}
        if kind == "text":
            parts.append({"text": part.get("text", ""), **extra})
        elif kind == "data" and isinstance(part.get("data"), dict):
            parts.append({"data": part["data"], **extra})
        elif kind == "file" and isinstance(part.get("file"), dict):
            parts.append({"file": part["file"], **extra})
    return parts
