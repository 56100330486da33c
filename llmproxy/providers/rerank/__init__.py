"""Rerank codecs (docs/providers.md#embeddings-and-rerank-on-the-wire): Cohere `/v1|v2/rerank` and Voyage
`/v1/rerank`."""

from llmproxy.model import Operation, Provider
from llmproxy.providers.rerank import cohere, voyage
from llmproxy.providers.vector_errors import COHERE_ERRORS, VOYAGE_ERRORS
from llmproxy.providers.vectors import RerankCodec

COHERE_RERANK = RerankCodec(
    provider=Provider.COHERE,
    operation=Operation.RERANK,
    decode_request=cohere.decode_request,
    decode_response=cohere.decode_response,
    encode_response=cohere.encode_response,
    visible=cohere.visible,
    decode_error=COHERE_ERRORS.decode_error,
    encode_error=COHERE_ERRORS.encode_error,
)
VOYAGE_RERANK = RerankCodec(
    provider=Provider.VOYAGE,
    operation=Operation.RERANK,
    decode_request=voyage.decode_request,
    decode_response=voyage.decode_response,
    encode_response=voyage.encode_response,
    visible=voyage.visible,
    decode_error=VOYAGE_ERRORS.decode_error,
    encode_error=VOYAGE_ERRORS.encode_error,
)

__all__ = ["COHERE_RERANK", "VOYAGE_RERANK"]
