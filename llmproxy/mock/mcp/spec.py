"""The `mcpServers` of an expectations file: MCP servers the mock serves, each with its tools (a result chosen
by the call's arguments, or results in sequence), its resources (static, and templates whose `{variables}`
the URI fills in) and its prompts. Field names are the MCP specification's where it has one (`inputSchema`,
`structuredContent`, `isError`, `mimeType`, `uriTemplate`), so a tool listed by a real server can be pasted in.

Everything a client would trip over is checked when the file loads: schemas are JSON Schemas, a result's
structured content meets its tool's outputSchema, names are unique, paths do not collide.
"""

import base64
import binascii
import re
from typing import Annotated, Any, Literal, Self

import jsonschema
from pydantic import AfterValidator, Field, field_validator, model_validator

from llmproxy.cassette import jsonpath
from llmproxy.mock.scripted import Answer, Placed, Scripted, Spec, check_places, compiled, unique
from llmproxy.mock.structured import checked_schema

type JsonValue = Any
type JsonObject = dict[str, Any]

_VARIABLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_INPUT_SCHEMA: JsonObject = {"type": "object"}


def _base64(value: str) -> str:
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error as error:
        raise ValueError(f"not base64: {error}") from error
    return value


type Base64 = Annotated[str, AfterValidator(_base64), Field(description="base64-encoded bytes")]


class TextContent(Spec):
    type: Literal["text"]
    text: str
    annotations: JsonObject | None = None


class ImageContent(Spec):
    type: Literal["image"]
    data: Base64
    mimeType: str = Field(min_length=1)
    annotations: JsonObject | None = None


class AudioContent(Spec):
    type: Literal["audio"]
    data: Base64
    mimeType: str = Field(min_length=1)
    annotations: JsonObject | None = None


class ResourceContents(Spec):
    """A resource's contents inside a message: text or a base64 blob."""

    uri: str = Field(min_length=1)
    mimeType: str | None = None
    text: str | None = None
    blob: Base64 | None = None

    @model_validator(mode="after")
    def _text_or_blob(self) -> Self:
        if (self.text is None) == (self.blob is None):
            raise ValueError("give text or blob (base64), one of them")
        return self


class EmbeddedResource(Spec):
    type: Literal["resource"]
    resource: ResourceContents
    annotations: JsonObject | None = None


class ResourceLink(Spec):
    type: Literal["resource_link"]
    uri: str = Field(min_length=1)
    name: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    mimeType: str | None = None
    annotations: JsonObject | None = None


type Content = Annotated[
    TextContent | ImageContent | AudioContent | EmbeddedResource | ResourceLink, Field(discriminator="type")
]


class LogMessage(Spec):
    """A `notifications/message` the tool sends before its result (to a client whose level lets it through)."""

    level: Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] = "info"
    data: JsonValue = Field(description="the message: any JSON value, a string usually")
    logger: str | None = None


class Progress(Spec):
    """A `notifications/progress` the tool sends before its result, when the call asked for progress."""

    progress: float = Field(ge=0)
    total: float | None = Field(default=None, gt=0)
    message: str | None = None


class JsonRpcError(Spec):
    """A JSON-RPC error instead of a result (a protocol error; a tool that fails says isError instead)."""

    code: int
    message: str = Field(min_length=1)
    data: JsonValue = None


class ToolAnswer(Answer):
    """What one call gets: a result — `text`, `content` blocks and/or `structuredContent`, `isError` for a tool
    execution error — or a JSON-RPC `error`. The log messages and progress go out first, `intervalMs` apart
    (a client that accepts event streams gets them; the result follows after the same interval)."""

    text: str | None = Field(default=None, description="a text content block, before any `content`")
    content: tuple[Content, ...] = ()
    structuredContent: JsonObject | None = Field(
        default=None, description="without text or content, its JSON is also sent as a text block"
    )
    isError: bool = False
    error: JsonRpcError | None = None
    log: tuple[LogMessage, ...] = ()
    progress: tuple[Progress, ...] = ()
    intervalMs: float = Field(default=0, ge=0, le=60_000)

    def check(self) -> None:
        given = self.text is not None or bool(self.content) or self.structuredContent is not None
        if self.error is not None and (given or self.isError):
            raise ValueError("an error is a JSON-RPC error: it takes no text, content, structuredContent or isError")
        if self.error is None and not given and not self.isError:
            raise ValueError("needs text, content, structuredContent, isError or error (or a sequence of them)")


class ArgumentsMatch(Spec):
    """Which calls a result answers, by their arguments. Every field given must hold; none: every call."""

    arguments: JsonObject | None = Field(
        default=None, description="these arguments, equal (objects: these keys, the rest ignored)"
    )
    argumentsMatch: dict[str, str] | None = Field(
        default=None, description="JSON path → regular expression searched in its value (text; else its JSON)"
    )

    @field_validator("argumentsMatch")
    @classmethod
    def _paths_and_patterns(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for path, pattern in (value or {}).items():
            jsonpath.parse(path)
            compiled(pattern, f"{path}: ")
        return value


class ToolResult(Scripted[ToolAnswer, ArgumentsMatch], ToolAnswer):
    """One of a tool's results: the answer given (or with `sequence`, answers in turn) to the calls `match`
    lets through, `times` times at most."""


class Tool(Spec):
    name: str = Field(min_length=1, max_length=128)
    title: str | None = None
    description: str = ""
    inputSchema: JsonObject = Field(default_factory=lambda: dict(DEFAULT_INPUT_SCHEMA))
    outputSchema: JsonObject | None = None
    annotations: JsonObject | None = None
    results: tuple[ToolResult, ...] = Field(min_length=1, description="tried in order: the first that matches")

    @field_validator("inputSchema", "outputSchema")
    @classmethod
    def _schemas(cls, value: JsonObject | None) -> JsonObject | None:
        if value is None:
            return None
        if value.get("type") != "object":
            raise ValueError('a tool\'s schema describes an object: "type": "object"')
        return checked_schema(value)

    @model_validator(mode="after")
    def _results_meet_the_output_schema(self) -> Self:
        if self.outputSchema is None:
            return self
        validator = jsonschema.validators.validator_for(self.outputSchema)(self.outputSchema)
        for index, result in enumerate(self.results):
            for step, answer in enumerate(result.answers):
                where = f"results[{index}]" + (f".sequence[{step}]" if result.sequence is not None else "")
                if answer.error is not None or answer.isError:
                    continue
                if answer.structuredContent is None:
                    raise ValueError(f"{where}: a tool with an outputSchema answers with structuredContent")
                failure = jsonschema.exceptions.best_match(validator.iter_errors(answer.structuredContent))
                if failure is not None:
                    raise ValueError(f"{where}.structuredContent does not meet the outputSchema: {failure.message}")
        return self


class _Contents(Spec):
    """What a resource and a resource template share: how they are listed, and their contents."""

    name: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    mimeType: str | None = None
    annotations: JsonObject | None = None
    text: str | None = Field(default=None, description="the contents (empty when neither text nor blob)")
    blob: Base64 | None = None

    @model_validator(mode="after")
    def _one_body(self) -> Self:
        if self.text is not None and self.blob is not None:
            raise ValueError("give text or blob, not both")
        return self


class Resource(_Contents):
    uri: str = Field(min_length=1)


class ResourceTemplate(_Contents):
    """Its text's `{variable}`s are replaced by the URI's values."""

    uriTemplate: str = Field(min_length=1, description="an RFC 6570 template of simple `{variables}`")
    completions: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="variable → values completion/complete offers (those starting as typed)"
    )

    @model_validator(mode="after")
    def _variables(self) -> Self:
        names = variables(self.uriTemplate)
        if not names:
            raise ValueError(f"the uriTemplate {self.uriTemplate!r} has no {{variable}}: make it a resource")
        unknown = sorted(set(self.completions) - set(names))
        if unknown:
            raise ValueError(f"completions for {', '.join(unknown)}: the uriTemplate has no such variable")
        return self


class PromptArgument(Spec):
    name: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    required: bool = False
    completions: tuple[str, ...] = Field(default=(), description="values completion/complete offers")


class PromptMessage(Spec):
    role: Literal["user", "assistant"]
    content: Content = Field(description="a text block's `{argument}` is replaced by the argument's value")


class Prompt(Spec):
    name: str = Field(min_length=1)
    title: str | None = None
    description: str | None = None
    arguments: tuple[PromptArgument, ...] = ()
    messages: tuple[PromptMessage, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_arguments(self) -> Self:
        unique("argument", [argument.name for argument in self.arguments])
        return self


class McpServer(Placed):
    """A mock MCP server: where it is served (its `name` is also `mcp-serve --server`'s) and what it offers."""

    kind = "mcp"

    version: str = "1.0.0"
    title: str | None = None
    instructions: str | None = None
    response: Literal["json", "sse"] = Field(
        default="json", description="how Streamable HTTP answers a request: one JSON body, or an event stream"
    )
    sessions: bool = Field(default=True, description="issue an Mcp-Session-Id and require it (false: stateless)")
    tools: tuple[Tool, ...] = ()
    resources: tuple[Resource, ...] = ()
    resourceTemplates: tuple[ResourceTemplate, ...] = ()
    prompts: tuple[Prompt, ...] = ()

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        unique("tool", [tool.name for tool in self.tools])
        unique("resource", [resource.uri for resource in self.resources])
        unique("resource template", [template.uriTemplate for template in self.resourceTemplates])
        unique("prompt", [prompt.name for prompt in self.prompts])
        return self


def variables(template: str) -> list[str]:
    """The `{variables}` of a URI template, in order."""
    return _VARIABLE.findall(template)


def check_servers(servers: tuple[McpServer, ...]) -> tuple[McpServer, ...]:
    """ValueError unless every server has a name and a place of its own."""
    check_places("MCP server", servers)
    return servers
