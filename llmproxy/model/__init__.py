"""The provider-neutral vocabulary every other part of llmproxy speaks (docs/architecture.md#the-core)."""

from llmproxy.model.completion import Completion, StopReason, Usage
from llmproxy.model.content import (
    AudioPart,
    CacheControl,
    ContentPart,
    DocumentPart,
    ImagePart,
    JsonObject,
    OtherPart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolResultPart,
)
from llmproxy.model.conversation import Conversation, Message, Role, ToolDefinition, name_tool_results
from llmproxy.model.embedding import (
    EmbeddingRequest,
    EmbeddingResult,
    RerankItem,
    RerankRequest,
    RerankResult,
    Vector,
)
from llmproxy.model.errors import ErrorKind, ProviderError
from llmproxy.model.routing import Operation, Provider, Route

__all__ = [
    "AudioPart",
    "CacheControl",
    "Completion",
    "ContentPart",
    "Conversation",
    "DocumentPart",
    "EmbeddingRequest",
    "EmbeddingResult",
    "ErrorKind",
    "ImagePart",
    "JsonObject",
    "Message",
    "Operation",
    "OtherPart",
    "Provider",
    "ProviderError",
    "ReasoningPart",
    "RerankItem",
    "RerankRequest",
    "RerankResult",
    "Role",
    "Route",
    "StopReason",
    "TextPart",
    "ToolCall",
    "ToolDefinition",
    "ToolResultPart",
    "Usage",
    "Vector",
    "name_tool_results",
]
