"""A request to a chat model, provider-neutral: who said what, with which tools on offer."""

from dataclasses import dataclass, replace
from enum import StrEnum

from llmproxy.model.content import CacheControl, ContentPart, JsonObject, TextPart, ToolCall, ToolResultPart


class Role(StrEnum):
    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    parts: tuple[ContentPart, ...]

    @property
    def text(self) -> str:
        """The message's plain text: its text parts, and the text of any tool results, joined."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart | ToolResultPart))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolCall))

    @property
    def tool_results(self) -> tuple[ToolResultPart, ...]:
        return tuple(p for p in self.parts if isinstance(p, ToolResultPart))


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool offered to the model. `kind` is "function" for client tools, else the provider's built-in type
    (e.g. "web_search_20250305", "local_shell"); `parameters` is the JSON Schema of the arguments."""

    name: str
    description: str | None = None
    parameters: JsonObject | None = None
    kind: str = "function"
    cache_control: CacheControl | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    """What the client asked for.

    `system` holds top-level instructions (Anthropic `system`, Responses `instructions`, Gemini
    `systemInstruction`); system and developer messages that sit in the message list stay there.
    """

    model: str | None
    messages: tuple[Message, ...]
    system: tuple[TextPart, ...] = ()
    tools: tuple[ToolDefinition, ...] = ()
    stream: bool = False
    max_output_tokens: int | None = None
    reasoning_requested: bool = False

    @property
    def latest(self) -> Message | None:
        return self.messages[-1] if self.messages else None

    @property
    def assistant_turns(self) -> int:
        """Completed assistant turns so far (MockServer's `turnIndex`)."""
        return sum(1 for m in self.messages if m.role is Role.ASSISTANT)

    @property
    def system_text(self) -> str:
        return "\n".join(p.text for p in self.system)


def name_tool_results(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Fill `ToolResultPart.name` from the earlier call with the same id, for wires that send only the id.
    Messages with nothing to fill are kept as they are."""
    names: dict[str, str] = {}
    named = list(messages)
    for index, message in enumerate(messages):
        parts: list[ContentPart] | None = None
        for position, part in enumerate(message.parts):
            if isinstance(part, ToolCall):
                names[part.id] = part.name
            elif isinstance(part, ToolResultPart) and part.name is None and part.tool_call_id in names:
                parts = parts or list(message.parts)
                parts[position] = replace(part, name=names[part.tool_call_id])
        if parts is not None:
            named[index] = Message(message.role, tuple(parts))
    return tuple(named)
