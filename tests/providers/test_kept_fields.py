"""What answers carry beside their content, and kept content in streams, in each provider's documented shape:
Gemini's grounding (search queries, results and supports), citations and URL context on the candidate;
Anthropic's `container`, `context_management` and matched `stop_sequence` on the message; Converse's
`trace` and `additionalModelResponseFields`; and the streams of Chat Completions, Cohere chat and Bedrock
ConverseStream holding content items, citations, tool results and blocks the Completion cannot say.

Each fixture is validated by the official SDK's own type (`GenerateContentResponse`, `BetaMessage`, botocore's
service model, `V2ChatResponse`), decoded, encoded again — body and stream — and compared with what came in;
the kept parts are counted, and `cassette to-expectations`' wire form reads back to the same parts."""

import json
from typing import Any

import pydantic
import pytest

from llmproxy.framing.sse import SseDecoder
from llmproxy.model import Operation, OtherPart, Provider, Route, TextPart
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.bedrock import CONVERSE
from llmproxy.providers.bedrock.wire import event_frame, messages
from llmproxy.providers.cohere_chat import CHAT as COHERE_CHAT
from llmproxy.providers.gemini import GENERATE
from llmproxy.providers.kept_parts import parts_format, read_parts, wire_parts
from llmproxy.providers.openai_chat import CHAT
from tests.providers.sdk_streams import anthropic_final_message

GROUNDING = {
    "webSearchQueries": ["llmproxy recorder"],
    "searchEntryPoint": {"renderedContent": "<div class='container'>llmproxy recorder</div>"},
    "groundingChunks": [{"web": {"uri": "https://example.com/llmproxy", "title": "example.com"}}],
    "groundingSupports": [
        {
            "segment": {"startIndex": 0, "endIndex": 24, "text": "llmproxy records traffic"},
            "groundingChunkIndices": [0],
            "confidenceScores": [0.93],
        }
    ],
}
CITATIONS = {"citations": [{"startIndex": 0, "endIndex": 24, "uri": "https://example.com/llmproxy", "license": ""}]}
URL_CONTEXT = {
    "urlMetadata": [
        {"retrievedUrl": "https://example.com/llmproxy", "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS"}
    ]
}
SAFETY = [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"}]


def _gemini_body(candidate: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 5,
            "totalTokenCount": 15,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 10}],
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
    }


def test_gemini_grounding_and_citations_survive() -> None:
    types = pytest.importorskip("google.genai.types")
    candidate = {
        "content": {"role": "model", "parts": [{"text": "llmproxy records traffic."}]},
        "finishReason": "STOP",
        "citationMetadata": CITATIONS,
        "groundingMetadata": GROUNDING,
        "urlContextMetadata": URL_CONTEXT,
        "index": 0,
        "safetyRatings": SAFETY,
    }
    body = _gemini_body(candidate)
    types.GenerateContentResponse.model_validate(body)  # the documented shape
    completion = GENERATE.decode_response(json.dumps(body).encode())
    assert completion.text == "llmproxy records traffic."
    assert completion.opaque == 3  # citations, grounding, URL context; the safety scores are not kept
    assert completion.parts[0] == TextPart("llmproxy records traffic.")
    again = json.loads(GENERATE.encode_response(completion))
    assert again == _gemini_body({name: value for name, value in candidate.items() if name != "safetyRatings"})
    types.GenerateContentResponse.model_validate(again)
    assert GENERATE.decode_stream(GENERATE.encode_stream(completion, delta_chars=4)) == completion


def test_gemini_stream_grounding_in_its_last_chunk() -> None:
    """A search-grounded stream: text chunks, then the chunk with the finish reason and the grounding."""
    chunks = [
        _gemini_body({"content": {"role": "model", "parts": [{"text": "llmproxy "}]}, "index": 0}),
        _gemini_body({"content": {"role": "model", "parts": [{"text": "records traffic."}]}, "index": 0}),
        _gemini_body({"content": {"role": "model"}, "finishReason": "STOP", "groundingMetadata": GROUNDING}),
    ]
    stream = [b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n" for chunk in chunks]
    completion = GENERATE.decode_stream(stream)
    assert completion.text == "llmproxy records traffic."
    assert completion.parts == (
        TextPart("llmproxy records traffic."),
        OtherPart("candidate.groundingMetadata", {"groundingMetadata": GROUNDING}),
    )
    body = json.loads(GENERATE.encode_response(completion))
    assert body["candidates"][0]["groundingMetadata"] == GROUNDING


CONTAINER = {"id": "container_011CQUeg", "expires_at": "2026-01-01T00:00:00Z"}
CONTEXT_MANAGEMENT = {
    "applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3, "cleared_input_tokens": 1200}]
}


def _anthropic_body() -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {"code": "1+1"}},
            {"type": "text", "text": "Two. END"},
        ],
        "stop_reason": "stop_sequence",
        "stop_sequence": "END",
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 5,
        },
        "container": CONTAINER,
        "context_management": CONTEXT_MANAGEMENT,
    }


def test_anthropic_message_fields_survive() -> None:
    beta = pytest.importorskip("anthropic.types.beta")
    body = _anthropic_body()
    beta.BetaMessage.model_validate(body)
    completion = MESSAGES.decode_response(json.dumps(body).encode())
    assert completion.text == "Two. END"
    assert completion.opaque == 4  # the server tool use, the container, the context edits, the stop sequence
    assert completion.parts[-3:] == (
        OtherPart("message.container", {"container": CONTAINER}),
        OtherPart("message.context_management", {"context_management": CONTEXT_MANAGEMENT}),
        OtherPart("message.stop_sequence", {"stop_sequence": "END"}),
    )
    assert json.loads(MESSAGES.encode_response(completion)) == body
    assert MESSAGES.decode_stream(MESSAGES.encode_stream(completion, delta_chars=3)) == completion


def test_anthropic_stream_fields_read_by_the_sdk() -> None:
    """The container and stop sequence travel in `message_delta`'s delta, the context edits beside it: the
    SDK's stream accumulator reads them back onto the final message."""
    completion = MESSAGES.decode_response(json.dumps(_anthropic_body()).encode())
    final = anthropic_final_message(b"".join(MESSAGES.encode_stream(completion, delta_chars=4)))
    assert final["container"] == CONTAINER
    assert final["context_management"] == CONTEXT_MANAGEMENT
    assert final["stop_sequence"] == "END"


CONVERSE_FIELDS = {
    "additionalModelResponseFields": {"stop_sequence": "END"},
    "trace": {"guardrail": {"modelOutput": ["checked"]}},
}


def _converse_model() -> Any:
    session = pytest.importorskip("botocore.session")
    return session.get_session().get_service_model("bedrock-runtime")


def _valid(shape: Any, value: Any) -> None:
    validate = pytest.importorskip("botocore.validate")
    report = validate.ParamValidator().validate(value, shape)
    assert not report.has_errors(), report.generate_report()


def test_converse_response_fields_survive() -> None:
    body = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Done."}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 0},
        **CONVERSE_FIELDS,
    }
    _valid(_converse_model().operation_model("Converse").output_shape, body)
    completion = CONVERSE.decode_response(json.dumps(body).encode())
    assert completion.opaque == 2
    assert json.loads(CONVERSE.encode_response(completion)) == body
    assert CONVERSE.decode_stream(CONVERSE.encode_stream(completion)) == completion


CITATION = {
    "title": "README",
    "sourceContent": [{"text": "llmproxy records traffic."}],
    "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 25}},
}
# A ConverseStream answer with server-side tool use and its result, a cited text and a reasoning block, as
# (event type, payload); the text and input fit in one delta each at the encoder's delta size.
CONVERSE_EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("messageStart", {"role": "assistant"}),
    ("contentBlockDelta", {"delta": {"reasoningContent": {"text": "Search."}}, "contentBlockIndex": 0}),
    ("contentBlockDelta", {"delta": {"reasoningContent": {"signature": "sig"}}, "contentBlockIndex": 0}),
    ("contentBlockStop", {"contentBlockIndex": 0}),
    (
        "contentBlockStart",
        {"start": {"toolUse": {"toolUseId": "tu_1", "name": "web", "type": "server_tool_use"}}, "contentBlockIndex": 1},
    ),
    ("contentBlockDelta", {"delta": {"toolUse": {"input": '{"q":"x"}'}}, "contentBlockIndex": 1}),
    ("contentBlockStop", {"contentBlockIndex": 1}),
    (
        "contentBlockStart",
        {
            "start": {"toolResult": {"toolUseId": "tu_1", "type": "server_tool_result", "status": "success"}},
            "contentBlockIndex": 2,
        },
    ),
    ("contentBlockDelta", {"delta": {"toolResult": [{"json": {"hits": 1}}]}, "contentBlockIndex": 2}),
    ("contentBlockStop", {"contentBlockIndex": 2}),
    ("contentBlockDelta", {"delta": {"text": "It records."}, "contentBlockIndex": 3}),
    ("contentBlockDelta", {"delta": {"citation": CITATION}, "contentBlockIndex": 3}),
    ("contentBlockStop", {"contentBlockIndex": 3}),
    ("contentBlockDelta", {"delta": {"text": " Done."}, "contentBlockIndex": 4}),
    ("contentBlockStop", {"contentBlockIndex": 4}),
    ("messageStop", {"stopReason": "end_turn", "additionalModelResponseFields": {"stop_sequence": "END"}}),
    (
        "metadata",
        {
            "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
            "metrics": {"latencyMs": 0},
            "trace": {"guardrail": {"modelOutput": ["checked"]}},
        },
    ),
]


def _events(frames: list[bytes]) -> list[tuple[str, dict[str, Any]]]:
    return [(message.string(":event-type") or "", json.loads(message.payload)) for message in messages(frames)]


def test_converse_stream_blocks_survive() -> None:
    model = _converse_model()
    stream_shape = model.operation_model("ConverseStream").output_shape.members["stream"]
    for event_type, payload in CONVERSE_EVENTS:
        _valid(stream_shape.members[event_type], payload)  # the documented shape of each event
    completion = CONVERSE.decode_stream([event_frame(*event) for event in CONVERSE_EVENTS])
    assert completion.text == "It records. Done."
    assert completion.reasoning == "Search."
    assert completion.tool_calls == ()  # the server's own tool use is not the client's to run
    assert completion.opaque == 5  # tool use, tool result, cited text, and two response fields
    body = json.loads(CONVERSE.encode_response(completion))
    _valid(model.operation_model("Converse").output_shape, body)  # the same answer, as a body
    assert body["output"]["message"]["content"][1:4] == [
        {"toolUse": {"toolUseId": "tu_1", "name": "web", "type": "server_tool_use", "input": {"q": "x"}}},
        {
            "toolResult": {
                "toolUseId": "tu_1",
                "type": "server_tool_result",
                "status": "success",
                "content": [{"json": {"hits": 1}}],
            }
        },
        {"citationsContent": {"content": [{"text": "It records."}], "citations": [CITATION]}},
    ]
    assert _events(CONVERSE.encode_stream(completion, delta_chars=64)) == CONVERSE_EVENTS
    assert CONVERSE.decode_response(json.dumps(body).encode()) == completion


def test_converse_stream_kept_block_without_a_stream_form() -> None:
    """A block ConverseStream has no delta for (guard content) travels whole in its block start."""
    body = {
        "output": {
            "message": {"role": "assistant", "content": [{"guardContent": {"text": {"text": "ok"}}}, {"text": "x"}]}
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
    }
    completion = CONVERSE.decode_response(json.dumps(body).encode())
    assert completion.opaque == 1
    assert CONVERSE.decode_stream(CONVERSE.encode_stream(completion)) == completion


CHAT_CONTENT = [
    {"type": "text", "text": "Here is the chart."},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    {"type": "text", "text": " Done.", "citations": ["https://example.com"]},
]


def _sse_data(frames: list[bytes]) -> list[dict[str, Any]]:
    decoder = SseDecoder()
    events = [event for frame in frames for event in decoder.feed(frame)]
    return [json.loads(event.data) for event in events if event.data.startswith("{")]


def test_chat_stream_keeps_content_items() -> None:
    """A compatible server's list content streams text in pieces and each kept item whole in a list."""
    message = {
        "role": "assistant",
        "content": CHAT_CONTENT,
        "annotations": [
            {"type": "url_citation", "url_citation": {"url": "u", "start_index": 0, "end_index": 4, "title": "t"}}
        ],
    }
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    completion = CHAT.decode_response(json.dumps(body).encode())
    assert completion.opaque == 3
    stream = CHAT.encode_stream(completion, delta_chars=5)
    assert CHAT.decode_stream(stream) == completion
    listed = [
        chunk["choices"][0]["delta"]["content"]
        for chunk in _sse_data(stream)
        if chunk["choices"] and isinstance(chunk["choices"][0]["delta"].get("content"), list)
    ]
    assert listed == [[CHAT_CONTENT[1]], [CHAT_CONTENT[2]]]
    assert (
        json.loads(CHAT.encode_response(CHAT.decode_stream(stream)))["choices"][0]["message"]["content"] == CHAT_CONTENT
    )


def test_cohere_stream_keeps_items_and_fields() -> None:
    cohere = pytest.importorskip("cohere")
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Check."},
            {"type": "text", "text": "It records traffic."},
            {"type": "image", "image": {"url": "https://example.com/a.png"}},
        ],
        "citations": [
            {
                "start": 3,
                "end": 10,
                "text": "records",
                "sources": [{"type": "document", "id": "d1", "document": {"id": "d1"}}],
                "type": "TEXT_CONTENT",
            }
        ],
        "grounding": {"documents": ["d1"]},
    }
    body = {
        "id": "c1",
        "message": message,
        "finish_reason": "COMPLETE",
        "usage": {"billed_units": {"input_tokens": 10, "output_tokens": 5}},
    }
    completion = COHERE_CHAT.decode_response(json.dumps(body).encode())
    assert completion.opaque == 4  # the thinking item kept with its list, the image, citations, a later field
    stream = COHERE_CHAT.encode_stream(completion, delta_chars=4)
    again = COHERE_CHAT.decode_stream(stream)
    assert again == completion
    assert json.loads(COHERE_CHAT.encode_response(again))["message"] == message
    events = pydantic.TypeAdapter(list[cohere.StreamedChatResponseV2]).validate_python(_sse_data(stream))
    assert [event.type for event in events][:4] == ["message-start", "content-start", "content-end", "content-start"]


@pytest.mark.parametrize(
    ("route", "codec", "body"),
    [
        (Route(Provider.ANTHROPIC, Operation.MESSAGES), MESSAGES, _anthropic_body()),
        (
            Route(Provider.GEMINI, Operation.GENERATE_CONTENT),
            GENERATE,
            _gemini_body(
                {
                    "content": {"role": "model", "parts": [{"text": "x"}]},
                    "finishReason": "STOP",
                    "groundingMetadata": GROUNDING,
                }
            ),
        ),
        (
            Route(Provider.BEDROCK, Operation.CONVERSE),
            CONVERSE,
            {
                "output": {"message": {"role": "assistant", "content": [{"text": "x"}]}},
                "stopReason": "end_turn",
                **CONVERSE_FIELDS,
            },
        ),
    ],
    ids=["anthropic", "gemini", "bedrock-converse"],
)
def test_kept_fields_in_expectations(route: Route, codec: Any, body: dict[str, Any]) -> None:
    """`cassette to-expectations` writes kept fields after the parts; the mock reads them back whole."""
    format_ = parts_format(route)
    assert format_ is not None
    completion = codec.decode_response(json.dumps(body).encode())
    wire = wire_parts(format_, completion)
    assert read_parts(format_, wire) == completion.parts
    fields = {
        "anthropic": {"context_management": CONTEXT_MANAGEMENT},
        "gemini": {"candidate": {"groundingMetadata": GROUNDING}},
    }
    assert fields.get(format_, {"response": {"trace": CONVERSE_FIELDS["trace"]}}) in wire
