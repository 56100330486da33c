"""The `a2aAgents` of an expectations file: A2A agents the mock serves, each with its agent card (name,
description, skills) and its replies — a task that goes through scripted states and ends with artifacts, or a
plain message, chosen by what the message sent to it says, or in sequence. Field names are the A2A
specification's where it has one (`artifacts`, `skills`, `mimeType`), states as the 0.3 wire spells them
(`input-required`).

Everything a client would trip over is checked when the file loads: a terminal state only last, parts of one
kind each, regular expressions that compile, names and places unique.
"""

from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from llmproxy.mock.mcp.spec import Base64, JsonRpcError
from llmproxy.mock.scripted import Answer, Placed, Scripted, Spec, check_places, compiled, unique

type JsonObject = dict[str, Any]

State = Literal[
    "submitted", "working", "input-required", "auth-required", "completed", "failed", "canceled", "rejected"
]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "canceled", "rejected"})
INTERRUPTED: frozenset[str] = frozenset({"input-required", "auth-required"})  # the task waits for the client


class FileContent(Spec):
    """A file in a part: by `uri`, or its base64 `bytes`."""

    uri: str | None = None
    bytes: Base64 | None = None
    mimeType: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _uri_or_bytes(self) -> Self:
        if (self.uri is None) == (self.bytes is None):
            raise ValueError("give uri or bytes (base64), one of them")
        return self


class Part(Spec):
    """One part of a message or an artifact: `text`, `data` (a JSON object) or a `file`, one of them."""

    text: str | None = None
    data: JsonObject | None = None
    file: FileContent | None = None
    metadata: JsonObject | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        given = [name for name in ("text", "data", "file") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                "a part is text, data or file, one of them" + (f", not {' and '.join(given)}" if given else "")
            )
        return self


def _parts(text: str | None, parts: tuple[Part, ...]) -> tuple[Part, ...]:
    return ((Part(text=text),) if text is not None else ()) + parts


class Artifact(Spec):
    """What the task produced: `text` (a text part) and/or `parts`."""

    artifactId: str | None = Field(default=None, description="default: the task's id, then -1, -2… in order")
    name: str | None = None
    description: str | None = None
    text: str | None = Field(default=None, description="a text part, before any `parts`")
    parts: tuple[Part, ...] = ()
    metadata: JsonObject | None = None

    @model_validator(mode="after")
    def _something(self) -> Self:
        if not self.all_parts:
            raise ValueError("an artifact needs text or parts")
        return self

    @property
    def all_parts(self) -> tuple[Part, ...]:
        return _parts(self.text, self.parts)


class TaskStatus(Spec):
    """One state the task goes through, with the agent's message said with it (`text`, `parts`)."""

    state: State
    text: str | None = None
    parts: tuple[Part, ...] = ()

    @property
    def all_parts(self) -> tuple[Part, ...]:
        return _parts(self.text, self.parts)


class AgentMessage(Spec):
    """The agent's answer as a message of its own, not a task."""

    text: str | None = None
    parts: tuple[Part, ...] = ()
    metadata: JsonObject | None = None

    @model_validator(mode="after")
    def _something(self) -> Self:
        if not self.all_parts:
            raise ValueError("a message needs text or parts")
        return self

    @property
    def all_parts(self) -> tuple[Part, ...]:
        return _parts(self.text, self.parts)


class AgentAnswer(Answer):
    """What one message to the agent gets: a task that goes through `states` (the last is where it rests: a
    terminal state, one waiting for input, or one still working, for a client to cancel) and ends with
    `artifacts`; or the agent's `message` alone, with no task; or a JSON-RPC `error`. Over a stream each state
    and artifact is an event, `intervalMs` apart."""

    states: tuple[State | TaskStatus, ...] = Field(
        default=(), description='default ["completed"]: each a state ("working") or {"state", "text", "parts"}'
    )
    artifacts: tuple[Artifact, ...] = ()
    message: str | AgentMessage | None = Field(
        default=None, description="the agent answers with this message and opens no task: text, or {text, parts}"
    )
    error: JsonRpcError | None = None
    intervalMs: float = Field(default=0, ge=0, le=60_000)

    def check(self) -> None:
        task = bool(self.states or self.artifacts)
        if self.error is not None and (task or self.message is not None):
            raise ValueError("an error is a JSON-RPC error: it takes no states, artifacts or message")
        if self.message is not None and task:
            raise ValueError("a message answers without a task: it takes no states or artifacts")
        for index, status in enumerate(self.task_states[:-1]):
            if status.state in TERMINAL:
                raise ValueError(f"states[{index}]: {status.state} ends the task: only the last state may")

    @property
    def task_states(self) -> tuple[TaskStatus, ...]:
        """Its states, each as a TaskStatus (default: completed)."""
        given = self.states or ("completed",)
        return tuple(TaskStatus(state=status) if isinstance(status, str) else status for status in given)

    @property
    def agent_message(self) -> AgentMessage | None:
        return AgentMessage(text=self.message) if isinstance(self.message, str) else self.message


class MessageMatch(Spec):
    """Which messages an answer is for, by what they say (their text parts, one a line). Every field given
    must hold; none: every message."""

    textContains: str | None = Field(default=None, description="this text, case aside")
    textMatches: str | None = Field(default=None, description="a regular expression searched in the text")
    continues: bool | None = Field(
        default=None,
        description="true: only a message to a task already open (an answer to input-required); false: only a new one",
    )

    @field_validator("textMatches")
    @classmethod
    def _a_pattern(cls, value: str | None) -> str | None:
        return value if value is None else compiled(value)


class AgentReply(Scripted[AgentAnswer, MessageMatch], AgentAnswer):
    """One of the agent's replies: its answer (or with `sequence`, answers in turn) to the messages `match`
    lets through, `times` times at most."""


class AgentSkill(Spec):
    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = ""
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    inputModes: tuple[str, ...] | None = None
    outputModes: tuple[str, ...] | None = None


class AgentProvider(Spec):
    organization: str = Field(min_length=1)
    url: str


class A2aAgent(Placed):
    """A mock A2A agent: where its JSON-RPC endpoint is served (its `name` is also its card's), its card, and
    its replies."""

    kind = "a2a"

    description: str = ""
    version: str = "1.0.0"
    provider: AgentProvider | None = None
    documentationUrl: str | None = None
    streaming: bool = Field(default=True, description="the card offers message/stream; false: it is refused")
    defaultInputModes: tuple[str, ...] = ("text/plain",)
    defaultOutputModes: tuple[str, ...] = ("text/plain",)
    skills: tuple[AgentSkill, ...] = ()
    replies: tuple[AgentReply, ...] = Field(min_length=1, description="tried in order: the first that matches answers")

    @model_validator(mode="after")
    def _unique_skills(self) -> Self:
        unique("skill", [skill.id for skill in self.skills])
        return self


def check_agents(agents: tuple[A2aAgent, ...]) -> tuple[A2aAgent, ...]:
    """ValueError unless every agent has a name and a place of its own."""
    check_places("A2A agent", agents)
    return agents
