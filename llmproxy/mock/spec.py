"""The expectations file (`llmproxy mock --expectations FILE`), as pydantic models: what `mock validate`
checks, what docs/mock.schema.json is generated from (scripts/gen_schemas.py), and the vocabulary the
mock speaks at run time — an answer is a `Respond`, an `ErrorReply`, an `Embedding`, a `Rerank` or an
`HttpReply`. Its `mcpServers` are described in `llmproxy.mock.mcp.spec`.

Field names are the file's (camelCase, as in MockServer); llmsim scripts keep llmsim's own snake_case, so a
script file from llmsim loads unchanged.
"""

from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from llmproxy.intercept.profile import ChaosProfile
from llmproxy.mock.a2a.spec import A2aAgent, check_agents
from llmproxy.mock.mcp.spec import McpServer, check_servers
from llmproxy.mock.scripted import compiled
from llmproxy.mock.structured import checked_schema
from llmproxy.model import Role, StopReason

type JsonValue = Any


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Normalization(_Spec):
    """How the latest message's text is normalised before `latestMessageContains`/`Matches` (MockServer's
    NormalizationOptions). Unset flags take their defaults: collapse whitespace and sort JSON keys on,
    lowercase and built-in volatile fields off."""

    collapseWhitespace: bool | None = None
    lowercase: bool | None = None
    sortJsonKeys: bool | None = None
    dropBuiltInVolatileFields: bool | None = Field(
        default=None, description="strip ISO-8601 timestamps, UUIDs and prefixed ids (req_…, msg_…, call_…)"
    )
    dropVolatileFields: tuple[str, ...] = Field(default=(), description="JSON field names dropped from a JSON prompt")


class Match(_Spec):
    """Which requests an expectation (or a conversation turn) answers. Every field set must hold; an empty
    match answers every LLM request."""

    provider: str | None = Field(default=None, description="e.g. anthropic, openai, gemini, bedrock, ollama")
    host: str | None = None
    path: str | None = Field(default=None, description="exact path, or a regular expression when it starts with ^")
    model: str | None = None
    turnIndex: int | None = Field(default=None, ge=0, description="completed assistant turns in the request")
    latestMessageContains: str | None = None
    latestMessageMatches: str | None = Field(default=None, description="a regular expression searched in the text")
    latestMessageRole: Role | None = None
    containsToolResultFor: str | None = Field(default=None, description="a tool name whose result the request carries")
    normalization: Normalization | None = None

    @field_validator("latestMessageMatches", "path")
    @classmethod
    def _compiles(cls, value: str | None, info: Any) -> str | None:
        if value is not None and (info.field_name == "latestMessageMatches" or value.startswith("^")):
            compiled(value)
        return value


class ToolCall(_Spec):
    name: str = Field(min_length=1)
    arguments: JsonValue = Field(default_factory=dict, description="any JSON value; objects are usual")
    id: str | None = Field(default=None, description="generated, stable and unique, when absent")


class Usage(_Spec):
    inputTokens: int = Field(default=0, ge=0)
    outputTokens: int = Field(default=0, ge=0)
    cachedInputTokens: int = Field(default=0, ge=0)
    cacheCreationTokens: int = Field(default=0, ge=0)
    reasoningTokens: int = Field(default=0, ge=0)


class Physics(_Spec):
    """How a streamed answer is paced on the wire; the same seed gives the same timing."""

    ttftMs: float = Field(default=0, ge=0, description="delay before the first event")
    tokensPerSecond: float | None = Field(default=None, gt=0, le=100_000, description="unset: no delay between events")
    jitter: float = Field(default=0, ge=0, le=1, description="uniform deviation of each gap, as a fraction")
    seed: int = 0


class KeptParts(_Spec):
    """An answer's parts exactly as one API format spells them — Anthropic content blocks, Responses output
    items, Gemini parts — for answers holding what the other fields cannot say (server tool use and
    results, citations, grounding, compaction, code execution), and after them the answer's kept fields
    (`llmproxy.providers.kept_parts`): `cassette to-expectations` writes them. A request in that format gets
    them as they are, in this order, in a body or a stream; other formats get the fields."""

    format: Literal["anthropic", "openai-responses", "gemini", "openai-chat", "cohere-chat", "bedrock-converse"]
    parts: tuple[JsonValue, ...]


class Respond(_Spec):
    """A successful chat answer, encoded in the requesting provider's format, streamed when asked."""

    text: str | None = None
    toolCalls: tuple[ToolCall, ...] = ()
    stopReason: StopReason | None = Field(default=None, description="default: tool_use with tool calls, else end_turn")
    usage: Usage | None = Field(default=None, description="absent: estimated from the request and the answer")
    reasoningText: str | None = None
    reasoningSignature: str | None = None
    parts: KeptParts | None = None
    physics: Physics | None = None
    outputSchema: dict[str, JsonValue] | str | None = Field(
        default=None, description="JSON Schema the text should meet"
    )
    enforceOutputSchema: bool = Field(default=False, description="a non-conforming text becomes a 502")

    @field_validator("outputSchema")
    @classmethod
    def _a_schema(cls, value: dict[str, JsonValue] | str | None) -> dict[str, JsonValue] | None:
        return None if value is None else checked_schema(value)

    @model_validator(mode="after")
    def _enforce_needs_a_schema(self) -> Self:
        if self.enforceOutputSchema and self.outputSchema is None:
            raise ValueError("enforceOutputSchema needs an outputSchema")
        return self

    @property
    def output_schema(self) -> dict[str, JsonValue] | None:
        """The schema as an object: given as JSON text, it was parsed (and checked) when the file loaded."""
        return self.outputSchema if isinstance(self.outputSchema, dict) else None


class ErrorReply(_Spec):
    """An error answer in the provider's error shape."""

    status: int = Field(ge=400, le=599)
    message: str | None = None
    retryAfter: float | None = Field(default=None, ge=0, description="seconds, sent as retry-after (and -ms)")


class HttpReply(_Spec):
    """Any other HTTP answer, as given: for what a client asks besides the LLM API (Claude Code's settings and
    policy look-ups, a health check)."""

    status: int = Field(default=200, ge=100, le=599)
    headers: dict[str, str] = Field(default_factory=dict)
    json_: JsonValue = Field(default=None, alias="json", description="a JSON body (content-type set to match)")
    body: str | None = Field(default=None, description="a text body, when not json")

    @model_validator(mode="after")
    def _one_body(self) -> Self:
        if self.json_ is not None and self.body is not None:
            raise ValueError("give json or body, not both")
        return self


class Embedding(_Spec):
    dimensions: int | None = Field(default=None, gt=0, description="default: the model's own size")
    deterministicFromInput: bool = True
    seed: int | None = None


class Rerank(_Spec):
    topN: int | None = Field(default=None, gt=0)
    deterministicFromInput: bool = True
    seed: int | None = None


type Answer = Respond | ErrorReply | Embedding | Rerank | HttpReply
"""What one request gets; scripts, failovers and the adversarial catalog each give one of these in turn."""


class Failover(_Spec):
    """The first requests fail with these statuses in turn, then every request gets `then`."""

    failWith: tuple[Annotated[int, Field(ge=400, le=599)], ...] = Field(min_length=1)
    retryAfter: float | None = Field(default=None, ge=0)
    then: Respond


class Adversarial(StrEnum):
    PROMPT_INJECTION_IGNORE_INSTRUCTIONS = "prompt_injection_ignore_instructions"
    PROMPT_INJECTION_TOOL_REDIRECT = "prompt_injection_tool_redirect"
    JAILBREAK_PERSONA = "jailbreak_persona"
    DATA_EXFILTRATION_REQUEST = "data_exfiltration_request"
    MALFORMED_JSON_PAYLOAD = "malformed_json_payload"
    EMPTY_RESPONSE = "empty_response"
    OVERLONG_REPETITION = "overlong_repetition"


# llmsim's scripted mode (docs/seeds: "Scripted response mode"), field names as llmsim spells them


class ScriptCall(_Spec):
    name: str = Field(min_length=1)
    arguments: JsonValue = Field(default_factory=dict)
    id: str | None = None


class AssistantTurn(_Spec):
    type: Literal["assistant"]
    text: str


class ToolCallsTurn(_Spec):
    type: Literal["tool_calls"]
    calls: tuple[ScriptCall, ...] = Field(min_length=1)


class MixedTurn(_Spec):
    type: Literal["mixed"]
    text: str
    calls: tuple[ScriptCall, ...] = Field(min_length=1)


class ErrorTurn(_Spec):
    type: Literal["error"]
    kind: Literal["rate_limit", "timeout", "invalid_request", "other"]
    message: str | None = None
    status_code: int | None = Field(default=None, ge=400, le=599)


type ScriptTurn = Annotated[AssistantTurn | ToolCallsTurn | MixedTurn | ErrorTurn, Field(discriminator="type")]


class Script(_Spec):
    on_exhausted: Literal["repeat_last", "error", "loop"] = "repeat_last"
    turns: tuple[ScriptTurn, ...] = Field(min_length=1)


type ScriptOrPath = Annotated[
    Annotated[Script, Tag("object")] | Annotated[str, Tag("path")],
    Discriminator(lambda value: "path" if isinstance(value, str) else "object"),
]


class _Answers(_Spec):
    """Exactly one way to answer."""

    respond: Respond | None = None
    error: ErrorReply | None = None
    embedding: Embedding | None = None
    rerank: Rerank | None = None
    http: HttpReply | None = None
    script: ScriptOrPath | None = Field(default=None, description="an llmsim script, or the path of its file")
    failover: Failover | None = None
    adversarial: Adversarial | None = None
    chaos: ChaosProfile | None = Field(
        default=None, description="faults for this answer (docs/chaos.md); a request refused does not use up a turn"
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        given = [name for name in ANSWER_FIELDS if getattr(self, name) is not None]
        if len(given) != 1:
            listed = ", ".join(ANSWER_FIELDS)
            found = f"got {', '.join(given)}" if given else "got none"
            raise ValueError(f"needs exactly one of {listed}; {found}")
        return self


ANSWER_FIELDS = ("respond", "error", "embedding", "rerank", "http", "script", "failover", "adversarial")


class Expectation(_Answers):
    match: Match = Match()
    times: int | None = Field(default=None, ge=1, description="how many requests it answers; unset: any number")
    priority: int = Field(default=0, description="higher first; equal priorities in file order")


class Isolation(_Spec):
    """Where a conversation's session key comes from: each key has its own turn position."""

    source: Literal["header", "queryParameter", "cookie"]
    name: str = Field(min_length=1)


class Turn(_Answers):
    match: Match | None = None


class ConversationSpec(_Spec):
    isolateBy: Isolation | None = None
    match: Match | None = Field(default=None, description="which requests belong to the conversation")
    turns: tuple[Turn, ...] = Field(min_length=1)


class Conversation(_Spec):
    conversation: ConversationSpec
    priority: int = 0


def _entry_kind(value: Any) -> str:
    has = value.__contains__ if isinstance(value, dict) else lambda name: hasattr(value, name)
    return "conversation" if has("conversation") else "expectation"


type Entry = Annotated[
    Annotated[Expectation, Tag("expectation")] | Annotated[Conversation, Tag("conversation")],
    Discriminator(_entry_kind),
]


def _expectations_or_servers(schema: dict[str, Any]) -> None:
    """The published schema says what the model's validator does: a file of MCP servers or A2A agents alone
    needs no `expectations`."""
    schema.pop("required", None)
    schema["anyOf"] = [{"required": [name]} for name in _SECTIONS]


_SECTIONS = ("expectations", "mcpServers", "a2aAgents")


class ExpectationsFile(_Spec):
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_expectations_or_servers)

    expectations: tuple[Entry, ...] = Field(description="may be left out when the file has mcpServers or a2aAgents")
    mcpServers: tuple[McpServer, ...] = Field(
        default=(), description="mock MCP servers, over Streamable HTTP on the mock and over stdio (docs/mcp.md)"
    )
    a2aAgents: tuple[A2aAgent, ...] = Field(
        default=(), description="mock A2A agents, over JSON-RPC and server-sent events on the mock (docs/a2a.md)"
    )

    @model_validator(mode="before")
    @classmethod
    def _servers_alone(cls, data: Any) -> Any:
        """A file of MCP servers or A2A agents only needs no empty `expectations`; any other file does not go
        without it."""
        if isinstance(data, dict) and "expectations" not in data and {"mcpServers", "a2aAgents"} & data.keys():
            return {**data, "expectations": []}
        return data

    @field_validator("mcpServers")
    @classmethod
    def _servers_apart(cls, servers: tuple[McpServer, ...]) -> tuple[McpServer, ...]:
        return check_servers(servers)

    @field_validator("a2aAgents")
    @classmethod
    def _agents_apart(cls, agents: tuple[A2aAgent, ...]) -> tuple[A2aAgent, ...]:
        return check_agents(agents)
