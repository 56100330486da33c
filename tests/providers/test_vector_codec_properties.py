"""Properties every embedding and rerank codec must have; each test runs once per codec in
`EMBEDDING_CODECS` / `RERANK_CODECS`, so registering a codec holds it to all of them.

* Round trips: decoding the answer to any request gives back what that answer carries (`visible`, itself
  idempotent); error replies decode to their message, status and (where the wire tells kinds apart) kind.
* Robustness: decoders return or raise `ParseError`, nothing else, for arbitrary bytes, arbitrary JSON
  spelled with the codec's own words, and the golden requests and answers with each value in turn removed
  or retyped, or a few values replaced anywhere.
"""

import contextlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.errors import ParseError
from llmproxy.model import (
    EmbeddingRequest,
    EmbeddingResult,
    ErrorKind,
    ProviderError,
    RerankItem,
    RerankRequest,
    RerankResult,
    Usage,
)
from llmproxy.providers.registry import EMBEDDING_CODECS, RERANK_CODECS
from tests.golden.vector_cases import EMBEDDING_CASES, RERANK_CASES
from tests.providers.strategies import dump, every_edit, fuzz_values, mutated, texts, words_in, words_of

CODECS: dict[str, Any] = {**EMBEDDING_CODECS, **RERANK_CODECS}
ALL = pytest.mark.parametrize("name", list(CODECS))
EMBEDDINGS = pytest.mark.parametrize("name", list(EMBEDDING_CODECS))
RERANKS = pytest.mark.parametrize("name", list(RERANK_CODECS))

counts = st.integers(0, 10**7)
numbers = st.floats(width=32, allow_nan=False, allow_infinity=False) | st.floats(-10, 10)
vectors = st.lists(numbers, max_size=5).map(tuple)
usages = st.none() | st.builds(Usage, input_tokens=counts, estimated=st.booleans())
embedding_results = st.builds(
    EmbeddingResult,
    vectors=st.lists(vectors, max_size=4).map(tuple),
    model=st.none() | texts,
    usage=usages,
    id=st.none() | texts,
)
embedding_requests = st.builds(
    EmbeddingRequest,
    model=st.none() | texts,
    inputs=st.lists(texts, max_size=4).map(tuple),
    dimensions=st.none() | st.integers(1, 4096),
    encodings=st.lists(st.sampled_from(["float", "base64", "int8", "uint8", "binary"]), max_size=3).map(tuple),
    input_type=st.none() | texts,
    non_text=st.lists(st.integers(0, 3), max_size=2, unique=True).map(tuple),
    single=st.booleans(),
)
rerank_results = st.builds(
    RerankResult,
    items=st.lists(
        st.builds(RerankItem, index=st.integers(0, 100), relevance_score=st.floats(0, 1), document=st.none() | texts),
        max_size=4,
    ).map(tuple),
    model=st.none() | texts,
    usage=usages,
    id=st.none() | texts,
    search_units=st.none() | counts,
)
rerank_requests = st.builds(
    RerankRequest,
    model=st.none() | texts,
    query=texts,
    documents=st.lists(texts, max_size=3).map(tuple),
    top_n=st.none() | st.integers(0, 10),
    return_documents=st.booleans(),
)

# -- round trips -------------------------------------------------------------------------------------


@EMBEDDINGS
@given(result=embedding_results, request=st.none() | embedding_requests)
def test_embeddings_round_trip(name: str, result: EmbeddingResult, request: EmbeddingRequest | None) -> None:
    codec = EMBEDDING_CODECS[name]
    shown = codec.visible(result, request)
    assert codec.visible(shown, request) == shown
    assert codec.decode_response(codec.encode_response(result, request)) == shown


@RERANKS
@given(result=rerank_results, request=st.none() | rerank_requests)
def test_rerank_round_trip(name: str, result: RerankResult, request: RerankRequest | None) -> None:
    codec = RERANK_CODECS[name]
    shown = codec.visible(result, request)
    assert codec.visible(shown, request) == shown
    assert codec.decode_response(codec.encode_response(result, request)) == shown


@ALL
@given(kind=st.sampled_from(ErrorKind), message=texts, retry_after=st.none() | st.floats(0, 10**6))
def test_error_replies_round_trip(name: str, kind: ErrorKind, message: str, retry_after: float | None) -> None:
    codec = CODECS[name]
    reply = codec.encode_error(kind, message, retry_after=retry_after)
    error = codec.decode_error(reply.status, reply.body)
    assert (error.kind, error.message, error.status) == (kind, message, reply.status)


# -- robustness --------------------------------------------------------------------------------------


def _documents(name: str) -> dict[str, list[Any]]:
    """The codec's golden requests, and the golden answers to them."""
    cases = [c for c in [*EMBEDDING_CASES.values(), *RERANK_CASES.values()] if c.codec == name]
    codec = CODECS[name]
    return {
        "request": [case.request for case in cases],
        "body": [json.loads(codec.encode_response(case.result, case.decoded)) for case in cases],
    }


DOCUMENTS = {name: _documents(name) for name in CODECS}
WORDS = {
    name: words_in([*DOCUMENTS[name]["request"], *DOCUMENTS[name]["body"]])
    | words_of("llmproxy.providers.embeddings")
    | words_of("llmproxy.providers.rerank")
    for name in CODECS
}
FUZZ = {name: fuzz_values(WORDS[name]) for name in CODECS}
DECODERS: dict[str, Callable[[Any, bytes], object]] = {
    "request": lambda codec, raw: codec.decode_request(raw),
    "body": lambda codec, raw: codec.decode_response(raw),
}


def only_parse_errors(decode: Callable[..., object], *args: Any) -> None:
    with contextlib.suppress(ParseError):
        decode(*args)


@ALL
@given(raw=st.binary(max_size=300), status=st.integers(0, 999))
def test_arbitrary_bytes_raise_only_parse_error(name: str, raw: bytes, status: int) -> None:
    codec = CODECS[name]
    only_parse_errors(codec.decode_request, raw)
    only_parse_errors(codec.decode_response, raw)
    assert isinstance(codec.decode_error(status, raw), ProviderError)


@ALL
@given(data=st.data(), status=st.integers(0, 999))
def test_arbitrary_json_raises_only_parse_error(name: str, data: st.DataObject, status: int) -> None:
    codec = CODECS[name]
    raw = dump(data.draw(FUZZ[name]))
    for decode in DECODERS.values():
        only_parse_errors(decode, codec, raw)
    assert isinstance(codec.decode_error(status, raw), ProviderError)


@ALL
@pytest.mark.parametrize("kind", list(DECODERS))
def test_every_single_edit_of_a_golden_document_raises_only_parse_error(name: str, kind: str) -> None:
    codec = CODECS[name]
    for index, document in enumerate(DOCUMENTS[name][kind]):
        for path, edited in every_edit(document):
            try:
                DECODERS[kind](codec, dump(edited))
            except ParseError:
                pass
            except Exception as exc:
                exc.add_note(f"{kind} #{index} edited at {path}: {dump(edited)[:2000]!r}")
                raise


@ALL
@given(data=st.data())
def test_corrupted_golden_documents_raise_only_parse_error(name: str, data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(list(DECODERS)))
    document = data.draw(st.sampled_from(DOCUMENTS[name][kind]).flatmap(lambda d: mutated(d, FUZZ[name])))
    only_parse_errors(DECODERS[kind], CODECS[name], dump(document))
