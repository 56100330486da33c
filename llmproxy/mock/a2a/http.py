"""The mock's A2A agents over HTTP (the A2A specification's JSON-RPC binding), answered by the mock's stage like
any mocked request — so the journal, a recording of what was sent, chaos and the request log see them as they
see an LLM call.

An agent is reached at its path on the mock's base URL (`/a2a/NAME`), or under a real agent's URL through the
proxy (`https://agents.example.com/translate`, as a client configured for it sends it). Its agent card is at
`/.well-known/agent-card.json` under that URL (and at the older `agent.json`), and at the host's root too when
the agent is the only one there. Each POST carries one JSON-RPC request; a stream is answered as server-sent
events, each a JSON-RPC response. Every JSON-RPC answer, errors too, is a 200, as JSON-RPC over HTTP has it.
"""

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import orjson

from llmproxy import jsonrpc
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply
from llmproxy.jsonrpc import INVALID_REQUEST, PARSE_ERROR, JsonObject
from llmproxy.mock.a2a import spec, wire
from llmproxy.mock.a2a.agent import A2aAgentMock, Answered, ReplyStanding
from llmproxy.mock.jsonrpc_http import JSON, LOOPBACK, STREAM, Served, refusal
from llmproxy.mock.scripted import apart

_CARDS: Final = ("/.well-known/agent-card.json", "/.well-known/agent.json")


@dataclass(frozen=True, slots=True)
class AgentStanding:
    """One agent as the control API lists it: its definition, its card, and what its replies have served."""

    definition: spec.A2aAgent
    card: JsonObject
    served: ReplyStanding


class A2aEndpoints:
    """The file's A2A agents, by the path and the URL each is served at."""

    def __init__(self, agents: tuple[spec.A2aAgent, ...]) -> None:
        self._by_name: dict[str, A2aAgentMock] = {}
        self._lock = threading.Lock()
        self._routes: Mapping[tuple[str | None, str], tuple[A2aAgentMock, bool]] = {}
        self.add(agents)

    @property
    def agents(self) -> list[spec.A2aAgent]:
        return [agent.definition for agent in self._by_name.values()]

    def standing(self, base_url: str) -> list[AgentStanding]:
        """Every agent in the order it was first added, with its card as read on `base_url` and what it served."""
        return [
            AgentStanding(
                agent.definition, card(agent.definition, base_url + agent.definition.served_path), agent.standing()
            )
            for agent in list(self._by_name.values())
        ]

    def add(self, agents: tuple[spec.A2aAgent, ...]) -> None:
        """Serve these too; one named as an agent already served replaces it (its tasks forgotten). Raises
        ValueError when one would share a path or URL with another."""
        named = {agent.name for agent in agents}
        kept = [agent for agent in self.agents if agent.name not in named]
        spec.check_agents(agents)
        for agent in agents:
            for other in kept:
                apart("A2A agent", agent, other)
        with self._lock:
            for agent in agents:
                self._by_name[agent.name] = A2aAgentMock(agent)
            self._routes = _routes(list(self._by_name.values()))

    def answer(self, incoming: Incoming) -> Served | None:
        """The answer when `incoming` is for one of the agents; None when it is for none of them."""
        host = incoming.host.lower()
        path = incoming.path.partition("?")[0]
        routes = self._routes
        found = routes.get((host, path)) or (routes.get((None, path)) if host in LOOPBACK else None)
        if found is None:
            return None
        agent, is_card = found
        name = agent.name
        if is_card:
            if incoming.method != "GET":
                return Served(
                    "a2a", refusal(405, "GET the agent card"), name, f"{incoming.method} agent card (refused: 405)"
                )
            url = agent.definition.url if host not in LOOPBACK and agent.definition.url else None
            if url is None:
                url = f"{incoming.raw.scheme}://{incoming.headers.get('host') or host}{agent.definition.served_path}"
            body = orjson.dumps(card(agent.definition, url))
            return Served("a2a", Reply(200, (JSON,), body), name, "GET agent card")
        if incoming.method != "POST":
            why = f"{incoming.method} is not served here: POST JSON-RPC requests"
            return Served("a2a", refusal(405, why, allow="POST"), name, f"{incoming.method} (refused: 405)")
        return _post(agent, incoming)


def card(definition: spec.A2aAgent, url: str) -> JsonObject:
    """The agent card, readable by a 1.0 client (`supportedInterfaces`) and a 0.3 one (`url`, `protocolVersion`)."""
    made: JsonObject = {
        "name": definition.name,
        "description": definition.description,
        "version": definition.version,
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ],
        "url": url,
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "capabilities": {"streaming": definition.streaming, "pushNotifications": False},
        "defaultInputModes": list(definition.defaultInputModes),
        "defaultOutputModes": list(definition.defaultOutputModes),
        "skills": [skill.model_dump(exclude_none=True) for skill in definition.skills],
    }
    if definition.provider is not None:
        made["provider"] = definition.provider.model_dump()
    if definition.documentationUrl is not None:
        made["documentationUrl"] = definition.documentationUrl
    return made


def _routes(agents: list[A2aAgentMock]) -> dict[tuple[str | None, str], tuple[A2aAgentMock, bool]]:
    """(host, path) → the agent and whether the path is its card; host None: on the mock's base URL."""
    routes: dict[tuple[str | None, str], tuple[A2aAgentMock, bool]] = {}
    hosts: dict[str | None, list[A2aAgentMock]] = {None: agents}
    for agent in agents:
        url = agent.definition.url
        if url is not None:
            hosts.setdefault(urlsplit(url).hostname, []).append(agent)
    for host, served in hosts.items():
        for agent in served:
            path = agent.definition.served_path if host is None else urlsplit(agent.definition.url or "").path or "/"
            routes[(host, path)] = (agent, False)
            for card_path in _CARDS:
                routes[(host, path.rstrip("/") + card_path)] = (agent, True)
        if len(served) == 1:  # the only agent of its host: its card at the root too
            for card_path in _CARDS:
                routes.setdefault((host, card_path), (served[0], True))
    return routes


def _post(agent: A2aAgentMock, incoming: Incoming) -> Served:
    name = agent.name
    message = incoming.json
    asked = message.get("method") if isinstance(message, dict) else None
    said = asked if isinstance(asked, str) else "POST"
    version = incoming.headers.get(wire.VERSION_HEADER)
    if message is None:
        answered = Answered(
            jsonrpc.error(None, PARSE_ERROR, "the body is not JSON (parse error)"), said=f"{said} (parse error)"
        )
    elif isinstance(message, list):
        answered = Answered(
            jsonrpc.error(None, INVALID_REQUEST, "A2A takes one JSON-RPC request a POST, not a batch"),
            said="a batch (refused)",
        )
    elif version is not None and ".".join(version.strip().split(".")[:2]) not in wire.VERSIONS:
        why = f"A2A-Version {version} is not supported: this agent speaks {', '.join(wire.VERSIONS)}"
        answered = Answered(
            jsonrpc.error(_id(message), wire.VERSION_NOT_SUPPORTED, why),
            said=f"{said} (error {wire.VERSION_NOT_SUPPORTED})",
        )
    else:
        answered = agent.answer(message)
    if answered.events is not None:
        events = tuple((at, b"data: " + orjson.dumps(event) + b"\n\n") for at, event in answered.events)
        return Served("a2a", Reply(200, STREAM, events=events), name, answered.said, answered.by, answered.missed)
    if answered.response is None:
        return Served("a2a", Reply(202, ()), name, answered.said)
    return Served(
        "a2a", Reply(200, (JSON,), orjson.dumps(answered.response)), name, answered.said, answered.by, answered.missed
    )


def _id(message: JsonObject) -> Any:
    given = message.get("id")
    return given if isinstance(given, str | int) and not isinstance(given, bool) else None
