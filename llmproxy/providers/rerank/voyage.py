"""Voyage `POST /v1/rerank` (docs/providers.md#embeddings-and-rerank-on-the-wire): `{query, documents, model, top_k?,
return_documents?}` → `{"object": "list", "data": [{"index", "relevance_score", "document"?}], "model", "usage":
{"total_tokens"}}`."""

from dataclasses import replace

from llmproxy.model import RerankItem, RerankRequest, RerankResult, Usage
from llmproxy.providers.base import JsonObject, dump_json
from llmproxy.providers.node import Node
from llmproxy.providers.vectors import input_tokens, model_of, read_number, read_optional_tokens, read_rerank_request

WHAT = "voyage rerank"


def decode_request(body: bytes) -> RerankRequest:
    return read_rerank_request(body, WHAT, "top_k", Node.string)


def decode_response(body: bytes) -> RerankResult:
    root = Node.parse(body, WHAT)
    root.obj()
    return RerankResult(
        items=tuple(
            RerankItem(
                index=item["index"].integer(),
                relevance_score=read_number(item["relevance_score"]),
                document=item["document"].opt_string(),
            )
            for item in root["data"].items()
        ),
        model=root["model"].opt_string() or None,
        usage=read_optional_tokens(root["usage"]["total_tokens"]),
    )


def encode_response(result: RerankResult, request: RerankRequest | None = None) -> bytes:
    data: list[JsonObject] = []
    for item in result.items:
        entry: JsonObject = {"index": item.index, "relevance_score": item.relevance_score}
        if item.document is not None:
            entry["document"] = item.document
        data.append(entry)
    body = {
        "object": "list",
        "data": data,
        "model": model_of(result, request) or "",
        "usage": {"total_tokens": input_tokens(result)},
    }
    return dump_json(body)


def visible(result: RerankResult, request: RerankRequest | None = None) -> RerankResult:
    usage = Usage(input_tokens=input_tokens(result))
    return replace(result, model=model_of(result, request), usage=usage, id=None, search_units=None)
