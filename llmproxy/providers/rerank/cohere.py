"""Cohere `POST /v1/rerank` and `/v2/rerank` (docs/providers.md#embeddings-and-rerank-on-the-wire).

v1 documents may be objects (`{"text"}`, or any fields with `rank_fields`); an object without `text` is
ranked as its JSON. Results are sent in the result's order with `document: {"text"}` on the items that
carry one (v1 `return_documents`); v2 never asks for documents. `meta.billed_units.search_units` carries
the result's search units. Cohere's answer names no model.
"""

from dataclasses import replace

from llmproxy.model import RerankItem, RerankRequest, RerankResult
from llmproxy.providers.base import JsonObject, dump_json, stable_id
from llmproxy.providers.node import Node
from llmproxy.providers.vectors import read_number, read_rerank_request

WHAT = "cohere rerank"


def decode_request(body: bytes) -> RerankRequest:
    return read_rerank_request(body, WHAT, "top_n", _document)


def _document(node: Node) -> str:
    if node.is_string():
        return node.string()
    node.obj()
    return node["text"].string() if node["text"].present else dump_json(node.value).decode()


def decode_response(body: bytes) -> RerankResult:
    root = Node.parse(body, WHAT)
    root.obj()
    units = root["meta"]["billed_units"]["search_units"]
    return RerankResult(
        items=tuple(_item(item) for item in root["results"].items()),
        id=root["id"].opt_string(),
        search_units=int(read_number(units)) if units.present else None,
    )


def _item(node: Node) -> RerankItem:
    document = node["document"]
    return RerankItem(
        index=node["index"].integer(),
        relevance_score=read_number(node["relevance_score"]),
        document=document["text"].opt_string() if document.present else None,
    )


def encode_response(result: RerankResult, request: RerankRequest | None = None) -> bytes:
    results: list[JsonObject] = []
    for item in result.items:
        entry: JsonObject = {"index": item.index, "relevance_score": item.relevance_score}
        if item.document is not None:
            entry["document"] = {"text": item.document}
        results.append(entry)
    meta: JsonObject = {"api_version": {"version": "2"}}
    if result.search_units is not None:
        meta["billed_units"] = {"search_units": result.search_units}
    return dump_json({"id": _id(result, request), "results": results, "meta": meta})


def _id(result: RerankResult, request: RerankRequest | None) -> str:
    return result.id or stable_id("", request, len(result.items))


def visible(result: RerankResult, request: RerankRequest | None = None) -> RerankResult:
    return replace(result, model=None, usage=None, id=_id(result, request))
