"""Content parts: the pieces a message is made of, the same for every provider.

A part keeps what matching, mocking and reports need and nothing provider-specific, except where a
provider concept has no neutral home: such blocks are kept whole as `OtherPart` so nothing is lost.
"""

from dataclasses import dataclass, field
from typing import Any

type JsonObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class CacheControl:
    """A prompt-cache breakpoint (Anthropic `cache_control`, Bedrock `cachePoint`); `ttl` as sent ("1h")."""

    ttl: str | None = None


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str
    cache_control: CacheControl | None = None


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image given inline (`data`, base64) or by reference (`url`, or a provider `file_id`)."""

    media_type: str | None = None
    data: str | None = None
    url: str | None = None
    file_id: str | None = None
    detail: str | None = None
    cache_control: CacheControl | None = None


@dataclass(frozen=True, slots=True)
class AudioPart:
    """Inline audio (base64 `data`) with its declared `format` ("wav", "mp3"…)."""

    data: str
    format: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentPart:
    """A document or file (PDF, plain text…) given inline, by URL or by provider file id."""

    media_type: str | None = None
    data: str | None = None
    text: str | None = None
    url: str | None = None
    file_id: str | None = None
    title: str | None = None
    cache_control: CacheControl | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asks the client to make.

    `arguments` is the parsed JSON object. When the model produced arguments that are not a JSON object
    (it happens, and adversarial mocks do it on purpose), `arguments` is empty and `invalid_arguments`
    keeps the exact text so encoders can send it back unchanged.
    """

    id: str
    name: str
    arguments: JsonObject = field(default_factory=dict)
    invalid_arguments: str | None = None
    cache_control: CacheControl | None = None


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """The client's answer to a tool call. `name` is filled from the matching call where the wire omits it."""

    tool_call_id: str
    content: "tuple[ContentPart, ...]" = ()
    is_error: bool = False
    name: str | None = None
    cache_control: CacheControl | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.content if isinstance(p, TextPart))


@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """Model reasoning: Anthropic thinking, Responses reasoning items, Gemini thought parts.

    `signature` is the opaque token that lets the provider verify it later (Anthropic `signature`,
    Responses `encrypted_content`, Gemini `thoughtSignature`). `redacted` blocks carry only a signature.
    """

    text: str = ""
    signature: str | None = None
    redacted: bool = False
    id: str | None = None


@dataclass(frozen=True, slots=True)
class OtherPart:
    """A block with no neutral meaning (server tool results, citations, provider extensions), kept whole."""

    kind: str
    raw: JsonObject


type ContentPart = (
    TextPart | ImagePart | AudioPart | DocumentPart | ToolCall | ToolResultPart | ReasoningPart | OtherPart
)
