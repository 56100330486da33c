"""The official SDKs' embeddings and rerank calls against `llmproxy mock`, through the proxy on 127.0.0.1:
each client talks to its provider's real host name and trusts llmproxy's CA, as it would in a user's tests.

One expectations file serves every SDK, each expectation routed by `match.provider`, `match.path` or
`match.model`; the vectors and scores are checked for what the mock promises (sizes, unit length, the same
vector for the same input, scores best first, `topN`), errors for the SDK's own classes, and the request log
for the expectation that answered.
"""

import base64
import json
import math
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from llmproxy.session import Session
from tests.mock.sdk_clients import azure_client, bedrock_client, bundle, openai_client, serving, trusting

type Vectors = Sequence[Sequence[float]]
type Embed = Callable[[list[str]], Vectors]

TEXTS = ["The food was delicious.", "Tōkyō 🚀 has a new line\nhere."]
QUERY = "What is the capital of France?"
DOCUMENTS = [
    "Carson City is the capital of Nevada.",
    "Paris is the capital of France.",
    "Berlin is in Germany.",
    "Paris, Texas.",
]
BEST = [1, 0]  # the mock ranks by the share of the query's words a document holds: 5 of 6, then 4 of 6
OVER_QUOTA = "over-quota-model"  # the model name every SDK's error test asks for

EXPECTATIONS: dict[str, dict[str, Any]] = {
    "quota": {"match": {"model": OVER_QUOTA}, "error": {"status": 429, "message": "embedding quota exhausted"}},
    "openai shortened": {
        "match": {"provider": "openai", "model": "text-embedding-3-large"},
        "embedding": {"dimensions": 256},
    },
    "openai": {"match": {"provider": "openai", "path": "/v1/embeddings"}, "embedding": {}},
    "azure": {"match": {"provider": "azure", "model": "my-embedder"}, "embedding": {"dimensions": 64}},
    "gemini": {
        "match": {"provider": "gemini", "path": "^/v1(beta)?/models/[^/]+:batchEmbedContents$"},
        "embedding": {},
    },
    "ollama": {"match": {"provider": "ollama", "path": "/api/embed"}, "embedding": {}},
    # boto3 names a Bedrock error by its x-amzn-errortype header: Bedrock's error shape whatever the model,
    # even one whose bodies llmproxy does not know
    "bedrock quota": {
        "match": {"provider": "bedrock", "model": "meta.llama3-8b-instruct-v1:0"},
        "error": {"status": 429, "message": "embedding quota exhausted"},
    },
    "titan": {"match": {"provider": "bedrock", "model": "amazon.titan-embed-text-v2:0"}, "embedding": {}},
    "bedrock cohere": {"match": {"provider": "bedrock", "model": "cohere.embed-english-v3"}, "embedding": {}},
    "cohere embed": {"match": {"provider": "cohere", "path": "/v2/embed"}, "embedding": {}},
    "cohere rerank": {"match": {"provider": "cohere", "path": "/v2/rerank"}, "rerank": {"topN": 2}},
    "voyage embed": {"match": {"provider": "voyage", "path": "/v1/embeddings"}, "embedding": {}},
    "voyage rerank": {"match": {"provider": "voyage", "path": "/v1/rerank"}, "rerank": {}},
}


def answered_by(name: str) -> str:
    """How the request log names an expectation: by its place in the file."""
    return f"expectation {list(EXPECTATIONS).index(name) + 1}"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, {"expectations": list(EXPECTATIONS.values())})


@contextmanager
def logged(proxy: Session) -> Iterator[list[dict[str, Any]]]:
    """The request log entries of the requests made inside the block."""
    assert proxy.mock_log is not None
    start = len(proxy.mock_log.entries)
    entries: list[dict[str, Any]] = []
    yield entries
    entries += proxy.mock_log.entries[start:]


def answers(entries: list[dict[str, Any]]) -> set[str | None]:
    return {entry.get("answeredBy") for entry in entries}


def assert_embeds(embed: Embed, size: int) -> None:
    """Unit vectors of `size`, a different one for each text, and the same one for the same text again."""
    first, second = embed(TEXTS)
    (again,) = embed(TEXTS[:1])
    for vector in (first, second):
        assert len(vector) == size
        assert math.sqrt(math.fsum(v * v for v in vector)) == pytest.approx(1, abs=1e-5)
    assert list(again) == list(first)
    assert list(second) != pytest.approx(list(first), abs=1e-3)


def assert_ranked(ranked: Sequence[tuple[int, float]], count: int) -> None:
    """`count` distinct documents, best first, the ones holding most of the query's words on top."""
    indices = [index for index, _ in ranked]
    scores = [score for _, score in ranked]
    assert len(ranked) == count
    assert len(set(indices)) == count
    assert all(0 <= index < len(DOCUMENTS) for index in indices)
    assert all(0 <= score < 1 for score in scores)
    assert scores == sorted(scores, reverse=True)
    assert indices[: len(BEST)] == BEST[:count]


# OpenAI and Azure OpenAI


@pytest.fixture(scope="module")
def gpt(proxy: Session) -> Iterator[Any]:
    with openai_client(proxy) as client:
        yield client


def floats(embedding: list[float] | str) -> list[float]:
    """An OpenAI embedding as the SDK hands it over: floats, or the base64 of little-endian float32 when
    base64 was asked for explicitly."""
    if isinstance(embedding, list):
        return embedding
    raw = base64.b64decode(embedding)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def openai_embedder(client: Any, model: str, **options: Any) -> Embed:
    """`embeddings.create`, its vectors as floats whatever the encoding."""

    def embed(texts: list[str]) -> Vectors:
        response = client.embeddings.create(model=model, input=texts, **options)
        assert [item.index for item in response.data] == list(range(len(texts)))
        return [floats(item.embedding) for item in response.data]

    return embed


@pytest.mark.parametrize("encoding", ["float", "base64"])
@pytest.mark.parametrize(("dimensions", "size"), [(None, 1536), (64, 64)], ids=["default-size", "dimensions"])
def test_openai_embeddings(gpt: Any, proxy: Session, encoding: str, dimensions: int | None, size: int) -> None:
    options: dict[str, Any] = {"encoding_format": encoding}
    if dimensions is not None:
        options["dimensions"] = dimensions
    with logged(proxy) as entries:
        assert_embeds(openai_embedder(gpt, "text-embedding-3-small", **options), size)
    assert answers(entries) == {answered_by("openai")}
    assert {(entry["provider"], entry["operation"], entry["model"]) for entry in entries} == {
        ("openai", "embeddings", "text-embedding-3-small")
    }


def test_openai_declared_dimensions_win(gpt: Any, proxy: Session) -> None:
    """An expectation's `dimensions` decides the size, whatever the model's own (3072 here). No encoding
    asked for: the SDK asks for base64 and decodes it itself."""
    with logged(proxy) as entries:
        assert_embeds(openai_embedder(gpt, "text-embedding-3-large"), 256)
    assert answers(entries) == {answered_by("openai shortened")}


def test_openai_error(gpt: Any, proxy: Session) -> None:
    import openai

    with logged(proxy) as entries, pytest.raises(openai.RateLimitError, match="embedding quota exhausted"):
        gpt.embeddings.create(model=OVER_QUOTA, input="hi")
    assert [(entry["answeredBy"], entry["status"]) for entry in entries] == [(answered_by("quota"), 429)]


@pytest.fixture(scope="module")
def azure(proxy: Session) -> Iterator[Any]:
    with azure_client(proxy) as client:
        yield client


def test_azure_embeddings(azure: Any, proxy: Session) -> None:
    """AzureOpenAI names the deployment in the path: `match.model` reads it from there."""
    with logged(proxy) as entries:
        assert_embeds(openai_embedder(azure, "my-embedder"), 64)
    assert answers(entries) == {answered_by("azure")}
    assert {entry["path"] for entry in entries} == {"/openai/deployments/my-embedder/embeddings"}


# Gemini (google-genai installs on Python 3.13+ only: see pyproject.toml)


@pytest.fixture(scope="module")
def gemini(proxy: Session) -> Iterator[Any]:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    options = types.HttpOptions(client_args={"proxy": proxy.url, "verify": trusting(proxy)})
    client = genai.Client(api_key="gemini-test", http_options=options)
    yield client
    client.close()


@pytest.mark.parametrize(("dimensions", "size"), [(None, 3072), (64, 64)], ids=["default-size", "dimensions"])
def test_gemini_embed_content(gemini: Any, proxy: Session, dimensions: int | None, size: int) -> None:
    types = pytest.importorskip("google.genai.types")
    config = types.EmbedContentConfig(output_dimensionality=dimensions)

    def embed(texts: list[str]) -> Vectors:
        response = gemini.models.embed_content(model="gemini-embedding-001", contents=texts, config=config)
        return [embedding.values for embedding in response.embeddings]

    with logged(proxy) as entries:
        assert_embeds(embed, size)
    assert answers(entries) == {answered_by("gemini")}
    assert {entry["model"] for entry in entries} == {"gemini-embedding-001"}


def test_gemini_error(gemini: Any, proxy: Session) -> None:
    errors = pytest.importorskip("google.genai.errors")
    with logged(proxy) as entries, pytest.raises(errors.ClientError) as caught:
        gemini.models.embed_content(model=OVER_QUOTA, contents="hi")
    assert (caught.value.code, caught.value.status, caught.value.message) == (
        429,
        "RESOURCE_EXHAUSTED",
        "embedding quota exhausted",
    )
    assert answers(entries) == {answered_by("quota")}


# Ollama


@pytest.fixture(scope="module")
def llama(proxy: Session) -> Iterator[Any]:
    import ollama

    with ollama.Client(host="http://127.0.0.1:11434", proxy=proxy.url) as client:
        yield client


def test_ollama_embed(llama: Any, proxy: Session) -> None:
    """One input goes as a string, several as a list: both get a list of vectors back."""

    def embed(texts: list[str]) -> Vectors:
        response = llama.embed(model="nomic-embed-text", input=texts[0] if len(texts) == 1 else texts)
        assert response.model == "nomic-embed-text"
        return response.embeddings

    with logged(proxy) as entries:
        assert_embeds(embed, 768)
    assert answers(entries) == {answered_by("ollama")}


def test_ollama_error(llama: Any, proxy: Session) -> None:
    import ollama

    with logged(proxy) as entries, pytest.raises(ollama.ResponseError) as caught:
        llama.embed(model=OVER_QUOTA, input="hi")
    assert (caught.value.status_code, caught.value.error) == (429, "embedding quota exhausted")
    assert answers(entries) == {answered_by("quota")}


# Bedrock (boto3 invoke_model: the body is the model's own JSON)


@pytest.fixture(scope="module")
def bedrock(proxy: Session) -> Iterator[Any]:
    with bedrock_client(proxy) as client:
        yield client


def invoke(bedrock: Any, model: str, body: dict[str, Any]) -> dict[str, Any]:
    response = bedrock.invoke_model(modelId=model, body=json.dumps(body), contentType="application/json")
    return json.loads(response["body"].read())


def test_bedrock_titan_embeddings(bedrock: Any, proxy: Session) -> None:
    """Titan embeds one text a call, at the size the body asks for."""

    def embed(texts: list[str]) -> Vectors:
        model = "amazon.titan-embed-text-v2:0"
        return [invoke(bedrock, model, {"inputText": text, "dimensions": 256})["embedding"] for text in texts]

    with logged(proxy) as entries:
        assert_embeds(embed, 256)
    assert answers(entries) == {answered_by("titan")}


def test_bedrock_cohere_embeddings(bedrock: Any, proxy: Session) -> None:
    def embed(texts: list[str]) -> Vectors:
        answer = invoke(bedrock, "cohere.embed-english-v3", {"texts": texts, "input_type": "search_document"})
        assert answer["texts"] == texts
        return answer["embeddings"]

    with logged(proxy) as entries:
        assert_embeds(embed, 1024)  # the model's own size
    assert answers(entries) == {answered_by("bedrock cohere")}


def test_bedrock_error(bedrock: Any, proxy: Session) -> None:
    with logged(proxy) as entries, pytest.raises(bedrock.exceptions.ThrottlingException) as caught:
        invoke(bedrock, "meta.llama3-8b-instruct-v1:0", {"prompt": "hi"})
    assert caught.value.response["Error"] == {"Code": "ThrottlingException", "Message": "embedding quota exhausted"}
    assert answers(entries) == {answered_by("bedrock quota")}


# Cohere (its SDK takes an httpx client)


@pytest.fixture(scope="module")
def cohere_client(proxy: Session) -> Iterator[Any]:
    import cohere
    import httpx

    with httpx.Client(proxy=proxy.url, verify=trusting(proxy)) as http:
        yield cohere.ClientV2(api_key="cohere-test", httpx_client=http)


def test_cohere_embed(cohere_client: Any, proxy: Session) -> None:
    def embed(texts: list[str]) -> Vectors:
        response = cohere_client.embed(
            model="embed-v4.0", input_type="search_document", texts=texts, embedding_types=["float"]
        )
        return response.embeddings.float_

    with logged(proxy) as entries:
        assert_embeds(embed, 1536)
    assert answers(entries) == {answered_by("cohere embed")}


def test_cohere_rerank(cohere_client: Any, proxy: Session) -> None:
    """The expectation's `topN` caps the results, though the client asked for none."""
    with logged(proxy) as entries:
        response = cohere_client.rerank(model="rerank-v3.5", query=QUERY, documents=DOCUMENTS)
        again = cohere_client.rerank(model="rerank-v3.5", query=QUERY, documents=DOCUMENTS)
    ranked = [(result.index, result.relevance_score) for result in response.results]
    assert_ranked(ranked, 2)
    assert [(result.index, result.relevance_score) for result in again.results] == ranked
    assert answers(entries) == {answered_by("cohere rerank")}
    assert {entry["operation"] for entry in entries} == {"rerank"}


def test_cohere_error(cohere_client: Any, proxy: Session) -> None:
    import cohere

    with logged(proxy) as entries, pytest.raises(cohere.TooManyRequestsError) as caught:
        cohere_client.rerank(model=OVER_QUOTA, query=QUERY, documents=DOCUMENTS, request_options={"max_retries": 0})
    assert (caught.value.status_code, caught.value.body) == (429, {"message": "embedding quota exhausted"})
    assert answers(entries) == {answered_by("quota")}


# Voyage (its SDK uses requests, which takes the proxy and CA from the environment)


@pytest.fixture
def voyage(proxy: Session, monkeypatch: pytest.MonkeyPatch) -> Any:
    import voyageai

    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", bundle(proxy))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    return voyageai.Client(api_key="pa-test")


@pytest.mark.parametrize(("dimensions", "size"), [(None, 512), (256, 256)], ids=["default-size", "dimensions"])
def test_voyage_embed(voyage: Any, proxy: Session, dimensions: int | None, size: int) -> None:
    def embed(texts: list[str]) -> Vectors:
        return voyage.embed(texts, model="voyage-3-lite", input_type="document", output_dimension=dimensions).embeddings

    with logged(proxy) as entries:
        assert_embeds(embed, size)
    assert answers(entries) == {answered_by("voyage embed")}
    assert {entry["host"] for entry in entries} == {"api.voyageai.com"}


@pytest.mark.parametrize("top_k", [None, 3])
def test_voyage_rerank(voyage: Any, proxy: Session, top_k: int | None) -> None:
    with logged(proxy) as entries:
        response = voyage.rerank(QUERY, DOCUMENTS, model="rerank-2", top_k=top_k)
    assert_ranked([(result.index, result.relevance_score) for result in response.results], top_k or len(DOCUMENTS))
    assert [result.document for result in response.results] == [DOCUMENTS[r.index] for r in response.results]
    assert answers(entries) == {answered_by("voyage rerank")}


def test_voyage_error(voyage: Any, proxy: Session) -> None:
    import voyageai.error

    with logged(proxy) as entries, pytest.raises(voyageai.error.RateLimitError, match="embedding quota exhausted"):
        voyage.embed(["hi"], model=OVER_QUOTA)
    assert answers(entries) == {answered_by("quota")}
