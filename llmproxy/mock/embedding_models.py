"""How many dimensions each known embedding model returns by default, for mock vectors of the right size.

Sources (the providers' model pages, as of 2026): OpenAI "Embeddings" guide (text-embedding-3-small 1536,
-3-large 3072, ada-002 1536); Google AI "Embeddings" (gemini-embedding-001 3072, text-embedding-004 768,
embedding-001 768); Amazon Bedrock Titan Embeddings (text v1 1536, text v2 1024, multimodal 1024); Cohere
"Embed" models (v3 1024, light v3 384, v4 1536); Voyage "Embeddings" (voyage-3 1024, -3-lite 512,
-3-large, -3.5, -3.5-lite, code-3 1024); Ollama library pages (nomic-embed-text 768, mxbai-embed-large
1024, all-minilm 384).
"""

from typing import Final

DEFAULT_DIMENSIONS: Final[dict[str, int]] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "gemini-embedding-001": 3072,
    "text-embedding-004": 768,
    "embedding-001": 768,
    "amazon.titan-embed-text-v1": 1536,
    "amazon.titan-embed-text-v2": 1024,
    "amazon.titan-embed-image-v1": 1024,
    "embed-english-v3": 1024,
    "embed-multilingual-v3": 1024,
    "embed-english-light-v3": 384,
    "embed-multilingual-light-v3": 384,
    "embed-v4": 1536,
    "voyage-3": 1024,
    "voyage-3-lite": 512,
    "voyage-3-large": 1024,
    "voyage-3.5": 1024,
    "voyage-3.5-lite": 1024,
    "voyage-code-3": 1024,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
}

FALLBACK_DIMENSIONS: Final = 768
"""For models not in the table: the size of most open embedding models (BERT-base and its descendants)."""


def default_dimensions(model: str | None) -> int:
    """The model's default size. Names are matched by the longest known name they contain, so spellings
    with prefixes and versions match too (`models/gemini-embedding-001`, `us.cohere.embed-v4:0`,
    `embed-english-light-v3.0`, `nomic-embed-text:latest`); unknown models get `FALLBACK_DIMENSIONS`."""
    name = (model or "").lower()
    known = [key for key in DEFAULT_DIMENSIONS if key in name]
    return DEFAULT_DIMENSIONS[max(known, key=len)] if known else FALLBACK_DIMENSIONS
