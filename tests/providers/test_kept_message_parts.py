"""Kept parts of Chat Completions, Cohere chat v2 and Bedrock Converse answers, in each provider's documented
shape: url citations and audio beside a Chat message, content items of kinds the codec does not know,
Cohere's citations, Converse's citations, guard content and reasoning it cannot say. Each fixture is
validated by the official SDK's own type where it has one (openai's `ChatCompletion`, cohere's
`V2ChatResponse`, botocore's Converse output shape), decoded, encoded again and compared with what came in;
the neutral fields still say the text, reasoning and calls, and the kept parts are counted."""

import base64
import json
from typing import Any

import pytest

from llmproxy.model import Completion, OtherPart, Provider, Route, TextPart, ToolCall
from llmproxy.model.routing import Operation
from llmproxy.providers.bedrock import CONVERSE
from llmproxy.providers.cohere_chat import CHAT as COHERE_CHAT
from llmproxy.providers.kept_parts import parts_format, read_parts, wire_parts
from llmproxy.providers.openai_chat import CHAT

CHAT_ANNOTATIONS = [
    {
        "type": "url_citation",
        "url_citation": {"start_index": 0, "end_index": 8, "url": "https://example.com/a", "title": "A"},
    }
]
CHAT_AUDIO = {"id": "audio_1", "data": "UklGRg==", "expires_at": 1700003600, "transcript": "It records traffic."}


def _chat_body(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "gpt-4o-search-preview",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _round_trip(codec: Any, body: dict[str, Any]) -> tuple[Completion, dict[str, Any]]:
    completion: Completion = codec.decode_response(json.dumps(body).encode())
    return completion, json.loads(codec.encode_response(completion))


def test_chat_annotations_and_audio_survive() -> None:
    chat = pytest.importorskip("openai.types.chat")
    message = {
        "role": "assistant",
        "content": "It records traffic.",
        "refusal": None,
        "annotations": CHAT_ANNOTATIONS,
        "audio": CHAT_AUDIO,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    body = _chat_body(message, "tool_calls")
    chat.ChatCompletion.model_validate(body)  # the documented shape
    completion, again = _round_trip(CHAT, body)
    assert completion.text == "It records traffic."
    assert completion.tool_calls == (ToolCall("call_1", "f", {}),)
    assert completion.opaque == 2
    assert completion.parts == (
        OtherPart("annotations", {"annotations": CHAT_ANNOTATIONS}),
        OtherPart("audio", {"audio": CHAT_AUDIO}),
    )
    assert again["choices"][0]["message"] == message
    chat.ChatCompletion.model_validate(again)


def test_chat_unknown_content_items_survive() -> None:
    """A compatible server's list content with items of kinds the codec does not know: the list comes back
    whole (the SDK's type says `content` is a string, so only the decoder judges it)."""
    content = [
        {"type": "text", "text": "Here is the chart."},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "text", "text": " Done.", "citations": ["https://example.com"]},
    ]
    body = _chat_body({"role": "assistant", "content": content})
    completion, again = _round_trip(CHAT, body)
    assert completion.text == "Here is the chart. Done."
    assert completion.parts[0] == TextPart("Here is the chart.")
    assert completion.opaque == 2  # the image, the text with citations
    assert again["choices"][0]["message"]["content"] == content


def test_chat_refusal_and_plain_answers_keep_nothing() -> None:
    """A refusal and an empty `annotations` are what the codec says already: no kept parts."""
    refused = {"role": "assistant", "content": None, "refusal": "I can't help with that.", "annotations": []}
    completion, again = _round_trip(CHAT, _chat_body(refused))
    assert completion.parts == ()
    assert again["choices"][0]["message"] == refused


COHERE_CITATIONS = [
    {
        "start": 0,
        "end": 7,
        "text": "records",
        "sources": [{"type": "document", "id": "doc_1", "document": {"id": "doc_1", "text": "llmproxy records."}}],
        "type": "TEXT_CONTENT",
    }
]


def test_cohere_citations_and_unknown_items_survive() -> None:
    cohere = pytest.importorskip("cohere")
    content = [
        {"type": "thinking", "thinking": "Check the document."},
        {"type": "text", "text": "It records traffic."},
        {"type": "image", "image": {"url": "https://example.com/a.png"}},
    ]
    body = {
        "id": "c1",
        "message": {"role": "assistant", "content": content[:2], "citations": COHERE_CITATIONS},
        "finish_reason": "COMPLETE",
        "usage": {"billed_units": {"input_tokens": 10, "output_tokens": 5}, "tokens": {"input_tokens": 12}},
    }
    cohere.V2ChatResponse.model_validate(body)  # the documented shape (the SDK knows no third item kind)
    completion, again = _round_trip(COHERE_CHAT, body)
    assert completion.text == "It records traffic."
    assert completion.reasoning == "Check the document."
    assert completion.parts == (OtherPart("citations", {"citations": COHERE_CITATIONS}),)
    assert again["message"] == body["message"]
    cohere.V2ChatResponse.model_validate(again)
    unknown = {**body, "message": {**body["message"], "content": content}}
    completion, again = _round_trip(COHERE_CHAT, unknown)
    assert completion.opaque == 3  # the thinking item kept with its list, the image, the citations
    assert again["message"] == unknown["message"]


CONVERSE_CONTENT: list[dict[str, Any]] = [
    {"reasoningContent": {"reasoningText": {"text": "Read the document.", "signature": "sig"}}},
    {"reasoningContent": {"redactedContent": base64.b64encode(b"hidden").decode()}},
    {
        "citationsContent": {
            "content": [{"text": "It records traffic."}],
            "citations": [
                {
                    "title": "README",
                    "sourceContent": [{"text": "llmproxy records traffic."}],
                    "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 25}},
                }
            ],
        }
    },
    {"guardContent": {"text": {"text": "checked", "qualifiers": ["grounding_source"]}}},
    {"text": " Done."},
    {"toolUse": {"toolUseId": "tu_1", "name": "save", "input": {"value": 1}}},
]


def test_converse_blocks_survive() -> None:
    botocore_session = pytest.importorskip("botocore.session")
    validate = pytest.importorskip("botocore.validate")
    model = botocore_session.get_session().get_service_model("bedrock-runtime")
    body = {
        "output": {"message": {"role": "assistant", "content": CONVERSE_CONTENT}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 120},
    }
    shape = model.operation_model("Converse").output_shape
    blobs = json.loads(json.dumps(body))  # botocore holds a blob as bytes, the wire as base64
    blobs["output"]["message"]["content"][1]["reasoningContent"]["redactedContent"] = b"hidden"
    errors = validate.ParamValidator().validate(blobs, shape)
    assert not errors.has_errors(), errors.generate_report()  # the documented shape
    completion, again = _round_trip(CONVERSE, body)
    assert completion.text == "It records traffic. Done."  # the cited text counts
    assert completion.reasoning == "Read the document."
    assert completion.tool_calls == (ToolCall("tu_1", "save", {"value": 1}),)
    assert completion.opaque == 2  # the citations, the guard content
    assert again["output"]["message"]["content"] == CONVERSE_CONTENT


@pytest.mark.parametrize(
    ("route", "codec", "body"),
    [
        (
            Route(Provider.OPENAI, Operation.CHAT_COMPLETIONS),
            CHAT,
            _chat_body({"role": "assistant", "content": "x", "annotations": CHAT_ANNOTATIONS}),
        ),
        (
            Route(Provider.COHERE, Operation.CHAT),
            COHERE_CHAT,
            {
                "id": "c",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "x"}, {"type": "image", "image": {}}],
                    "citations": COHERE_CITATIONS,
                },
                "finish_reason": "COMPLETE",
            },
        ),
        (
            Route(Provider.BEDROCK, Operation.CONVERSE),
            CONVERSE,
            {"output": {"message": {"role": "assistant", "content": CONVERSE_CONTENT}}, "stopReason": "end_turn"},
        ),
    ],
    ids=["openai-chat", "cohere-chat", "bedrock-converse"],
)
def test_wire_parts_read_back(route: Route, codec: Any, body: dict[str, Any]) -> None:
    """What `cassette to-expectations` writes (`respond.parts`) is read back by the mock to the same parts."""
    format_ = parts_format(route)
    assert format_ is not None
    completion = codec.decode_response(json.dumps(body).encode())
    assert completion.opaque
    assert read_parts(format_, wire_parts(format_, completion)) == completion.parts


def test_chat_kept_fields_stream() -> None:
    """Kept fields travel in a delta of their own; the SDK's stream accumulator reads them back."""
    openai = pytest.importorskip("openai")
    httpx = pytest.importorskip("httpx2")
    message = {"role": "assistant", "content": "It records traffic.", "annotations": CHAT_ANNOTATIONS}
    completion = CHAT.decode_response(json.dumps(_chat_body(message)).encode())
    stream = CHAT.encode_stream(completion, delta_chars=5)
    assert CHAT.decode_stream(stream) == completion

    def serve(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"".join(stream))

    http = httpx.Client(transport=httpx.MockTransport(serve))
    with openai.OpenAI(api_key="sk-test", http_client=http) as client:
        asked: Any = [{"role": "user", "content": "hi"}]
        with client.chat.completions.stream(model="m", messages=asked) as events:
            final = events.get_final_completion()
    assert final.choices[0].message.model_dump(mode="json")["annotations"] == CHAT_ANNOTATIONS


def test_cohere_citations_stream() -> None:
    """Citations travel as `citation-start` events, one each, of the SDK's own type; read back whole."""
    cohere = pytest.importorskip("cohere")
    body = {
        "id": "c1",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "It records."}],
            "citations": COHERE_CITATIONS,
        },
        "finish_reason": "COMPLETE",
    }
    completion = COHERE_CHAT.decode_response(json.dumps(body).encode())
    stream = COHERE_CHAT.encode_stream(completion, delta_chars=4)
    assert COHERE_CHAT.decode_stream(stream) == completion
    events = [
        json.loads(line[6:]) for chunk in stream for line in chunk.decode().splitlines() if line.startswith("data: ")
    ]
    starts = [event for event in events if event["type"] == "citation-start"]
    assert [cohere.CitationStartEvent.model_validate(event).delta.message.citations.text for event in starts] == [
        "records"
    ]
