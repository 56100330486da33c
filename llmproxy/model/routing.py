"""Which API a request speaks: provider, operation, streaming."""

from dataclasses import dataclass
from enum import StrEnum


class Provider(StrEnum):
    """An API family. Gateways and compatible servers count as the API they speak, not who runs them."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    AZURE = "azure"
    OLLAMA = "ollama"
    BEDROCK = "bedrock"
    GEMINI = "gemini"
    GEMINI_CODE_ASSIST = "gemini_code_assist"
    COHERE = "cohere"
    VOYAGE = "voyage"


class Operation(StrEnum):
    MESSAGES = "messages"
    COUNT_TOKENS = "count_tokens"
    LIST_MODELS = "list_models"
    CHAT_COMPLETIONS = "chat_completions"
    RESPONSES = "responses"
    EMBEDDINGS = "embeddings"
    CHAT = "chat"
    GENERATE = "generate"
    CONVERSE = "converse"  # Bedrock converse + converse-stream
    INVOKE = "invoke"  # Bedrock invoke + invoke-with-response-stream; the body's format follows the model
    GENERATE_CONTENT = "generate_content"
    RERANK = "rerank"
    # the Responses API's lifecycle beyond creating a response (docs/providers.md#the-responses-lifecycle)
    RESPONSE_RETRIEVE = "response_retrieve"  # GET /responses/{id}: background polling, stream resumption
    RESPONSE_CANCEL = "response_cancel"
    RESPONSE_DELETE = "response_delete"
    RESPONSE_INPUT_ITEMS = "response_input_items"
    RESPONSE_COMPACT = "response_compact"  # Codex's remote compaction


@dataclass(frozen=True, slots=True)
class Route:
    """The result of detection. `streaming` is None until the body has been seen, when the body decides.
    `model` is set when the URL names it (Gemini, Bedrock, Azure deployments); `version` when the URL's API
    version changes the wire format and the body does not say which (Cohere `/v1/embed` and `/v2/embed`).
    `websocket`: the API spoken over a WebSocket (Responses' `response.create` messages), which streams.
    `vendor` names who serves the request when that is not the API's owner — `deepseek` for DeepSeek's
    OpenAI-compatible API, `lmstudio` for LM Studio on its default port —, so that prices are looked up for
    the right vendor; None when the owner serves it or the host is not known (a private gateway)."""

    provider: Provider
    operation: Operation
    streaming: bool | None = None
    model: str | None = None
    version: str | None = None
    websocket: bool = False
    vendor: str | None = None
