"""Embedding and rerank requests and results, provider-neutral (docs/providers.md#embeddings-and-rerank).

Vectors are tuples of floats whatever the wire carried (JSON numbers, base64 float32, Gemini `values`),
so one result can be served in any provider's shape. Names of options (`encodings`, `input_type`) keep
the provider's own spelling: they are not translated between providers, only carried.
"""

from dataclasses import dataclass

from llmproxy.model.completion import Usage

type Vector = tuple[float, ...]


@dataclass(frozen=True, slots=True)
class EmbeddingRequest:
    """What a client asked to embed: one vector is owed per element of `inputs`.

    * `non_text` holds the positions of inputs that were not text (token arrays, images); their entry in
      `inputs` is a stand-in that keeps different inputs different (``tokens:[1, 2]``, ``image:<digest>``).
    * `encodings` are the number formats asked for, as the wire names them (OpenAI `encoding_format`,
      Cohere `embedding_types`, Voyage `encoding_format`/`output_dtype`); empty means the API's default.
    * `single` is set when the answer holds one bare vector rather than a list (Gemini `embedContent`,
      Ollama's legacy `/api/embeddings`, Titan).
    """

    model: str | None
    inputs: tuple[str, ...]
    dimensions: int | None = None
    encodings: tuple[str, ...] = ()
    input_type: str | None = None
    non_text: tuple[int, ...] = ()
    single: bool = False


@dataclass(frozen=True, slots=True)
class EmbeddingResult:
    """The vectors, in input order. `usage.input_tokens` is what the provider billed, where it says."""

    vectors: tuple[Vector, ...]
    model: str | None = None
    usage: Usage | None = None
    id: str | None = None


@dataclass(frozen=True, slots=True)
class RerankRequest:
    """A query and the documents to order by relevance to it. `top_n` of None means all of them."""

    model: str | None
    query: str
    documents: tuple[str, ...]
    top_n: int | None = None
    return_documents: bool = False


@dataclass(frozen=True, slots=True)
class RerankItem:
    """One document's place: its position in the request, its score, and its text when asked for."""

    index: int
    relevance_score: float
    document: str | None = None


@dataclass(frozen=True, slots=True)
class RerankResult:
    """Items best first. `search_units` is Cohere's billing unit; `usage` the tokens Voyage bills."""

    items: tuple[RerankItem, ...]
    model: str | None = None
    usage: Usage | None = None
    id: str | None = None
    search_units: int | None = None
