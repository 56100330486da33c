"""Answers holding what a Completion has no field for — server tool use and its results, citations,
compaction, container uploads, MCP calls, code execution, inline images — in each provider's documented
shape: each fixture is first validated by the official SDK's own type (`BetaMessage`, `Response`,
`GenerateContentResponse`), then decoded, encoded again (body and stream) and compared with what came in.
The kept parts come back byte for byte; the neutral fields still say the text, reasoning and calls."""

import json
from typing import Any

import pytest

from llmproxy.model import OtherPart, ReasoningPart, TextPart, ToolCall
from llmproxy.providers.anthropic import MESSAGES
from llmproxy.providers.gemini import GENERATE
from llmproxy.providers.openai_responses import RESPONSES
from tests.providers.sdk_streams import anthropic_final_message

USAGE = {"input_tokens": 10, "output_tokens": 5}
WEB_SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "llmproxy"}}
ANTHROPIC_CONTENT: list[dict[str, Any]] = [
    {"type": "thinking", "thinking": "Search first.", "signature": "sig-1"},
    {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
    WEB_SEARCH,
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://example.com/a",
                "title": "A",
                "encrypted_content": "enc-a",
                "page_age": "2 days",
            }
        ],
    },
    {
        "type": "text",
        "text": "It records LLM traffic.",
        "citations": [
            {
                "type": "web_search_result_location",
                "url": "https://example.com/a",
                "title": "A",
                "cited_text": "records",
                "encrypted_index": "idx",
            }
        ],
    },
    {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "lookup", "server_name": "docs", "input": {"q": "x"}},
    {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "is_error": False,
        "content": [{"type": "text", "text": "y"}],
    },
    {"type": "container_upload", "file_id": "file_1"},
    {"type": "compaction", "content": "Summary of the earlier turns.", "encrypted_content": "enc-c"},
    {"type": "text", "text": " Done."},
    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
]


def test_anthropic_blocks_survive() -> None:
    beta = pytest.importorskip("anthropic.types.beta")
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": ANTHROPIC_CONTENT,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": USAGE,
    }
    beta.BetaMessage.model_validate(body)  # the documented shape
    completion = MESSAGES.decode_response(json.dumps(body).encode())
    assert completion.text == "It records LLM traffic. Done."
    assert completion.reasoning == "Search first."
    assert completion.tool_calls == (ToolCall("toolu_1", "get_weather", {"city": "Paris"}),)
    assert completion.opaque == 7  # the server tool, its result, the cited text, MCP both ways, upload, compaction
    assert completion.parts[0] == ReasoningPart("Search first.", "sig-1")
    again = json.loads(MESSAGES.encode_response(completion))
    assert again["content"] == ANTHROPIC_CONTENT
    beta.BetaMessage.model_validate(again)
    assert MESSAGES.decode_stream(MESSAGES.encode_stream(completion, delta_chars=5)) == completion


def test_anthropic_stream_read_by_the_sdk() -> None:
    """The SDK's own stream helper reads llmproxy's stream of these blocks back to the same content."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": ANTHROPIC_CONTENT}
    completion = MESSAGES.decode_response(json.dumps({**message, "stop_reason": "end_turn", "usage": USAGE}).encode())
    final = anthropic_final_message(b"".join(MESSAGES.encode_stream(completion, delta_chars=4)))
    assert final["content"] == ANTHROPIC_CONTENT


RESPONSES_OUTPUT: list[dict[str, Any]] = [
    {
        "id": "rs_1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Look it up."}],
        "encrypted_content": "enc",
    },
    {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "llmproxy"}},
    {
        "id": "fs_1",
        "type": "file_search_call",
        "status": "completed",
        "queries": ["proxy"],
        "results": [{"file_id": "file_1", "filename": "a.md", "score": 0.9, "text": "a proxy"}],
    },
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": "It records traffic.",
                "annotations": [
                    {
                        "type": "url_citation",
                        "start_index": 3,
                        "end_index": 10,
                        "url": "https://example.com",
                        "title": "E",
                    }
                ],
            }
        ],
    },
    {
        "id": "ci_1",
        "type": "code_interpreter_call",
        "status": "completed",
        "code": "print(1)",
        "container_id": "cntr_1",
        "outputs": [{"type": "logs", "logs": "1"}],
    },
    {"id": "ig_1", "type": "image_generation_call", "status": "completed", "result": "aW1n"},
    {"id": "mcp_1", "type": "mcp_call", "name": "lookup", "server_label": "docs", "arguments": "{}", "output": "y"},
    {"id": "cmp_1", "type": "compaction", "encrypted_content": "enc-c"},
    {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "f", "arguments": "{}"},
]


def test_responses_items_survive() -> None:
    types = pytest.importorskip("openai.types.responses")
    body = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1700000000,
        "status": "completed",
        "model": "gpt-5",
        "output": RESPONSES_OUTPUT,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 2},
            "total_tokens": 15,
        },
    }
    types.Response.model_validate(body)
    completion = RESPONSES.decode_response(json.dumps(body).encode())
    assert completion.text == "It records traffic."
    assert completion.reasoning == "Look it up."
    assert completion.tool_calls == (ToolCall("call_1", "f", {}),)
    assert completion.opaque == 7
    again = json.loads(RESPONSES.encode_response(completion))
    assert again["output"][1:8] == RESPONSES_OUTPUT[1:8]  # kept whole; the neutral ones get llmproxy's ids
    assert again["output"][0]["id"] == "rs_1"
    types.Response.model_validate(again)
    assert RESPONSES.decode_stream(RESPONSES.encode_stream(completion, delta_chars=5)) == completion


GEMINI_PARTS: list[dict[str, Any]] = [
    {"text": "Let me compute.", "thought": True, "thoughtSignature": "c2ln"},
    {"executableCode": {"language": "PYTHON", "code": "print(6 * 7)"}},
    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
    {"text": "The answer is 42."},
    {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
    {"functionCall": {"name": "save", "args": {"value": 42}}, "thoughtSignature": "c2lnMg=="},
]


def test_gemini_parts_survive() -> None:
    types = pytest.importorskip("google.genai.types")
    body = {
        "candidates": [{"content": {"role": "model", "parts": GEMINI_PARTS}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
    }
    types.GenerateContentResponse.model_validate(body)
    completion = GENERATE.decode_response(json.dumps(body).encode())
    assert completion.text == "The answer is 42."
    assert completion.reasoning == "Let me compute."
    assert completion.tool_calls == (ToolCall("", "save", {"value": 42}),)
    assert completion.parts[3] == TextPart("The answer is 42.")
    assert [type(p) for p in completion.parts].count(OtherPart) == 4  # code, result, image, signed call
    again = json.loads(GENERATE.encode_response(completion))
    assert again["candidates"][0]["content"]["parts"] == GEMINI_PARTS
    types.GenerateContentResponse.model_validate(again)
    assert GENERATE.decode_stream(GENERATE.encode_stream(completion, delta_chars=4)) == completion
