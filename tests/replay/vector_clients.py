"""Client programs for the embeddings and rerank round trips, run as children of `llmproxy record` and
`llmproxy replay`: `python tests/replay/vector_clients.py NAME` prints what the SDK returned as JSON, the
vectors of every call and the (index, score) of each reranked document.

They use the official SDKs with their default hosts and nothing but the environment llmproxy injects (proxy
and CA variables): no base URL, no CA option.
"""

import json
import sys
from typing import Any

TEXTS = ["The food was delicious.", "Tōkyō 🚀 has a new line\nhere."]
QUERY = "What is the capital of France?"
DOCUMENTS = ["Carson City is the capital of Nevada.", "Paris is the capital of France.", "Paris, Texas."]


def openai_session() -> dict[str, Any]:
    """Floats asked for, then the SDK's default (base64, which it decodes itself)."""
    import openai

    client = openai.OpenAI(api_key="sk-test", max_retries=0)
    floats = client.embeddings.create(model="text-embedding-3-small", input=TEXTS, encoding_format="float")
    default = client.embeddings.create(model="text-embedding-3-small", input=TEXTS[0])
    return {"vectors": [item.embedding for item in (*floats.data, *default.data)], "ranked": []}


def cohere_session() -> dict[str, Any]:
    import cohere

    client = cohere.ClientV2(api_key="cohere-test")
    embedded = client.embed(model="embed-v4.0", input_type="search_document", texts=TEXTS, embedding_types=["float"])
    ranked = client.rerank(model="rerank-v3.5", query=QUERY, documents=DOCUMENTS, top_n=2)
    return {
        "vectors": embedded.embeddings.float_,
        "ranked": [(result.index, result.relevance_score) for result in ranked.results],
    }


def voyage_session() -> dict[str, Any]:
    import voyageai

    client = voyageai.Client(api_key="pa-test")
    embedded = client.embed(TEXTS, model="voyage-3-lite", input_type="document")
    ranked = client.rerank(QUERY, DOCUMENTS, model="rerank-2", top_k=2)
    return {
        "vectors": embedded.embeddings,
        "ranked": [(result.index, result.relevance_score) for result in ranked.results],
    }


def ollama_session() -> dict[str, Any]:
    """One input, then several."""
    import ollama

    client = ollama.Client(host="https://ollama.com")
    one = client.embed(model="nomic-embed-text", input=TEXTS[0])
    several = client.embed(model="nomic-embed-text", input=TEXTS)
    return {"vectors": [*one.embeddings, *several.embeddings], "ranked": []}


SESSIONS = {
    "openai": openai_session,
    "cohere": cohere_session,
    "voyage": voyage_session,
    "ollama": ollama_session,
}

if __name__ == "__main__":
    print(json.dumps(SESSIONS[sys.argv[1]]()))
