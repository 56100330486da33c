"""`llmproxy mock validate --json`."""

from typing import Literal

from pydantic import Field

from llmproxy.mock import spec
from llmproxy.outputs import Document, Part
from llmproxy.words import plural


class Entry(Part):
    kind: Literal["expectation", "conversation"]
    answers: list[str] = Field(
        description="how it answers: respond, error, embedding, rerank, http, script, failover or adversarial"
        " (a conversation: one per turn)"
    )


class McpServerEntry(Part):
    name: str
    path: str = Field(description="where it is served on the mock's base URL")
    url: str | None = Field(description="the real server's URL it is also served under, through the proxy")
    tools: list[str]
    resources: int = Field(description="static resources and resource templates")
    prompts: list[str]


class A2aAgentEntry(Part):
    name: str
    path: str = Field(description="its JSON-RPC endpoint on the mock's base URL")
    url: str | None = Field(description="the real agent's URL it is also served under, through the proxy")
    skills: list[str]
    replies: int


class MockValidation(Document):
    command: Literal["mock validate"] = "mock validate"
    file: str
    valid: bool = Field(description="the file can be served as it is (exit status 0)")
    errors: list[str] = Field(description="each problem, with the file and the JSON path of the field")
    entries: list[Entry] = Field(description="the file's entries in order; empty when it is not valid")
    mcpServers: list[McpServerEntry] = Field(default=[], description="the file's mock MCP servers (docs/mcp.md)")
    a2aAgents: list[A2aAgentEntry] = Field(default=[], description="the file's mock A2A agents (docs/a2a.md)")


def validation(file: str, loaded: spec.ExpectationsFile) -> MockValidation:
    entries = [_entry(entry) for entry in loaded.expectations]
    servers = [
        McpServerEntry(
            name=server.name,
            path=server.served_path,
            url=server.url,
            tools=[tool.name for tool in server.tools],
            resources=len(server.resources) + len(server.resourceTemplates),
            prompts=[prompt.name for prompt in server.prompts],
        )
        for server in loaded.mcpServers
    ]
    agents = [
        A2aAgentEntry(
            name=agent.name,
            path=agent.served_path,
            url=agent.url,
            skills=[skill.id for skill in agent.skills],
            replies=len(agent.replies),
        )
        for agent in loaded.a2aAgents
    ]
    return MockValidation(file=file, valid=True, errors=[], entries=entries, mcpServers=servers, a2aAgents=agents)


def invalid(file: str, message: str) -> MockValidation:
    return MockValidation(file=file, valid=False, errors=message.splitlines(), entries=[])


def describe(document: MockValidation) -> str:
    """One line: what the file holds."""
    conversations = [entry for entry in document.entries if entry.kind == "conversation"]
    parts = [plural(len(document.entries) - len(conversations), "expectation")]
    if conversations:
        turns = sum(len(entry.answers) for entry in conversations)
        parts.append(f"{plural(len(conversations), 'conversation')} of {plural(turns, 'turn')}")
    for server in document.mcpServers:
        offered = [
            plural(len(server.tools), "tool"),
            plural(server.resources, "resource"),
            plural(len(server.prompts), "prompt"),
        ]
        parts.append(f"MCP server {server.name} ({', '.join(offered)})")
    for agent in document.a2aAgents:
        offered = [plural(len(agent.skills), "skill"), plural(agent.replies, "reply", "replies")]
        parts.append(f"A2A agent {agent.name} ({', '.join(offered)})")
    return f"{document.file}: valid, {', '.join(parts)}"


def _entry(entry: spec.Expectation | spec.Conversation) -> Entry:
    if isinstance(entry, spec.Conversation):
        return Entry(kind="conversation", answers=[_answer(turn) for turn in entry.conversation.turns])
    return Entry(kind="expectation", answers=[_answer(entry)])


def _answer(answers: spec.Expectation | spec.Turn) -> str:
    return next(name for name in spec.ANSWER_FIELDS if getattr(answers, name) is not None)
