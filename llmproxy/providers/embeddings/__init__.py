"""Embedding codecs, one module per wire format (docs/providers.md#embeddings-and-rerank-on-the-wire): OpenAI (and
Azure), Gemini, Ollama, Bedrock (Titan, Cohere), Cohere, Voyage."""

from dataclasses import replace

from llmproxy.model import Operation, Provider
from llmproxy.providers import openai_errors
from llmproxy.providers.bedrock import errors as bedrock_errors
from llmproxy.providers.embeddings import bedrock, cohere, gemini, ollama, openai, voyage
from llmproxy.providers.gemini import errors as gemini_errors
from llmproxy.providers.ollama import errors as ollama_errors
from llmproxy.providers.vector_errors import COHERE_ERRORS, VOYAGE_ERRORS
from llmproxy.providers.vectors import EmbeddingCodec

OPENAI_EMBEDDINGS = EmbeddingCodec(
    provider=Provider.OPENAI,
    operation=Operation.EMBEDDINGS,
    decode_request=openai.decode_request,
    decode_response=openai.decode_response,
    encode_response=openai.encode_response,
    visible=openai.visible,
    decode_error=openai_errors.decode_error,
    encode_error=openai_errors.encode_error,
)
GEMINI_EMBEDDINGS = EmbeddingCodec(
    provider=Provider.GEMINI,
    operation=Operation.EMBEDDINGS,
    decode_request=gemini.decode_request,
    decode_response=gemini.decode_response,
    encode_response=gemini.encode_response,
    visible=gemini.visible,
    decode_error=gemini_errors.decode_error,
    encode_error=gemini_errors.encode_error,
)
OLLAMA_EMBEDDINGS = EmbeddingCodec(
    provider=Provider.OLLAMA,
    operation=Operation.EMBEDDINGS,
    decode_request=ollama.decode_request,
    decode_response=ollama.decode_response,
    encode_response=ollama.encode_response,
    visible=ollama.visible,
    decode_error=ollama_errors.decode_error,
    encode_error=ollama_errors.encode_error,
)
BEDROCK_TITAN_EMBEDDINGS = EmbeddingCodec(
    provider=Provider.BEDROCK,
    operation=Operation.INVOKE,
    decode_request=bedrock.titan_decode_request,
    decode_response=bedrock.titan_decode_response,
    encode_response=bedrock.titan_encode_response,
    visible=bedrock.titan_visible,
    decode_error=bedrock_errors.decode_error,
    encode_error=bedrock_errors.encode_error,
)
BEDROCK_COHERE_EMBEDDINGS = EmbeddingCodec(
    provider=Provider.BEDROCK,
    operation=Operation.INVOKE,
    decode_request=cohere.decode_request,
    decode_response=cohere.decode_response,
    encode_response=bedrock.cohere_encode_response,
    visible=bedrock.cohere_visible,
    decode_error=bedrock_errors.decode_error,
    encode_error=bedrock_errors.encode_error,
)
COHERE_EMBEDDINGS = EmbeddingCodec(
    provider=Provider.COHERE,
    operation=Operation.EMBEDDINGS,
    decode_request=cohere.decode_request,
    decode_response=cohere.decode_response,
    encode_response=cohere.encode_response,
    visible=cohere.visible,
    decode_error=COHERE_ERRORS.decode_error,
    encode_error=COHERE_ERRORS.encode_error,
)
COHERE_EMBEDDINGS_V1 = replace(COHERE_EMBEDDINGS, encode_response=cohere.encode_response_v1)
"""Cohere `/v1/embed`: a bare list of floats unless `embedding_types` are named."""
VOYAGE_EMBEDDINGS = EmbeddingCodec(
    provider=Provider.VOYAGE,
    operation=Operation.EMBEDDINGS,
    decode_request=voyage.decode_request,
    decode_response=voyage.decode_response,
    encode_response=voyage.encode_response,
    visible=voyage.visible,
    decode_error=VOYAGE_ERRORS.decode_error,
    encode_error=VOYAGE_ERRORS.encode_error,
)


def bedrock_embedding_codec(model_id: str) -> EmbeddingCodec | None:
    """The embedding body a Bedrock model id speaks, if it is an embedding model. Ids may carry a region
    prefix (`us.cohere.embed-v4:0`) or be ARNs ending in the model id."""
    model = model_id.rsplit("/", 1)[-1]
    if "amazon.titan-embed-" in model:
        return BEDROCK_TITAN_EMBEDDINGS
    if "cohere.embed-" in model:
        return BEDROCK_COHERE_EMBEDDINGS
    return None


__all__ = [
    "BEDROCK_COHERE_EMBEDDINGS",
    "BEDROCK_TITAN_EMBEDDINGS",
    "COHERE_EMBEDDINGS",
    "COHERE_EMBEDDINGS_V1",
    "GEMINI_EMBEDDINGS",
    "OLLAMA_EMBEDDINGS",
    "OPENAI_EMBEDDINGS",
    "VOYAGE_EMBEDDINGS",
    "bedrock_embedding_codec",
]
