"""The response object: decoding real-shaped bodies, encoding with request echo, and the golden round trip.

The round trip of any Completion is a property of every codec: tests/providers/test_codec_properties.py.
"""

import json
from typing import Any

from llmproxy.model import (
    Completion,
    ErrorKind,
    OtherPart,
    ProviderError,
    ReasoningPart,
    StopReason,
    TextPart,
    ToolCall,
    Usage,
)
from llmproxy.providers.openai_responses import RESPONSES
from tests.golden.cases import CASES

# Shaped like the API's response object (docs/providers.md#openai-responses): reasoning, text and a call.
API_RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1700000000,
    "status": "completed",
    "model": "gpt-x",
    "output": [
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Thinking"}]},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
        },
        {
            "id": "fc_1",
            "type": "function_call",
            "status": "completed",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
        },
        {"id": "ws_1", "type": "web_search_call", "status": "completed"},
    ],
    "usage": {
        "input_tokens": 30,
        "input_tokens_details": {"cached_tokens": 10},
        "output_tokens": 15,
        "output_tokens_details": {"reasoning_tokens": 8},
        "total_tokens": 45,
    },
    "error": None,
    "incomplete_details": None,
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


def decode(body: dict[str, object]) -> Completion:
    return RESPONSES.decode_response(json.dumps(body).encode())


def test_decodes_an_api_response() -> None:
    assert decode(API_RESPONSE) == Completion(
        id="resp_1",
        model="gpt-x",
        created=1700000000,
        text="Hello",
        tool_calls=(ToolCall("call_1", "get_weather", {"city": "Paris"}),),
        stop_reason=StopReason.TOOL_USE,
        reasoning="Thinking",
        reasoning_signature=None,
        usage=Usage(input_tokens=30, output_tokens=15, cache_read_tokens=10, reasoning_tokens=8),
        parts=(  # the web search call has no neutral meaning: the output items are kept in order
            ReasoningPart("Thinking", id="rs_1"),
            TextPart("Hello"),
            ToolCall("call_1", "get_weather", {"city": "Paris"}),
            OtherPart("web_search_call", API_RESPONSE["output"][3]),  # type: ignore[index]
        ),
    )


def test_kept_items_survive_encoding() -> None:
    """Items with no neutral meaning, and messages whose text carries citations, come back as they were."""
    cited = {
        "id": "msg_2",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": "See the docs.",
                "annotations": [
                    {"type": "url_citation", "start_index": 4, "end_index": 8, "url": "https://x", "title": "x"}
                ],
                "logprobs": [],
            }
        ],
    }
    compaction = {"id": "cmp_1", "type": "compaction", "encrypted_content": "opaque=="}
    body = {**API_RESPONSE, "output": [*API_RESPONSE["output"], cited, compaction]}  # type: ignore[list-item]
    completion = decode(body)
    assert completion.text == "HelloSee the docs."
    assert completion.opaque == 3
    output = json.loads(RESPONSES.encode_response(completion))["output"]
    assert output[3:] == body["output"][3:]
    assert output[0]["id"] == "rs_1"
    assert output[1]["content"][0]["text"] == "Hello"
    assert RESPONSES.decode_stream(RESPONSES.encode_stream(completion, delta_chars=4)) == completion


def test_incomplete_failed_cancelled_and_refusal() -> None:
    incomplete = {**API_RESPONSE, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
    assert decode(incomplete).stop_reason is StopReason.MAX_TOKENS
    filtered = {**incomplete, "incomplete_details": {"reason": "content_filter"}}
    assert decode(filtered).stop_reason is StopReason.CONTENT_FILTER
    assert decode({**API_RESPONSE, "status": "cancelled"}).stop_reason is StopReason.OTHER

    failed = decode(
        {**API_RESPONSE, "status": "failed", "error": {"code": "rate_limit_exceeded", "message": "try again in 1.5s"}}
    )
    assert failed.error == ProviderError(ErrorKind.RATE_LIMIT, "try again in 1.5s", "rate_limit_exceeded")
    assert failed.stop_reason is None
    assert decode({**API_RESPONSE, "status": "failed"}).error == ProviderError(ErrorKind.SERVER_ERROR, "", None)

    refusal = {"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "I can't."}]}
    refused = decode({**API_RESPONSE, "output": [refusal]})
    assert (refused.text, refused.stop_reason) == ("I can't.", StopReason.REFUSAL)


def test_cache_writes_and_float_timestamps() -> None:
    usage = {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 30},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 105,
    }
    completion = decode({**API_RESPONSE, "usage": usage, "created_at": 1700000000.0})
    assert completion.usage == Usage(input_tokens=100, output_tokens=5, cache_read_tokens=60, cache_write_tokens=30)
    assert completion.usage.uncached_input_tokens == 10
    assert completion.created == 1700000000


def test_encoded_body_shape() -> None:
    body = json.loads(RESPONSES.encode_response(CASES["reasoning"]))
    assert body["id"] == "gold_reason_1"
    assert (body["object"], body["status"], body["created_at"]) == ("response", "completed", 1_767_225_600)
    reasoning, message = body["output"]
    assert reasoning["type"] == "reasoning"
    assert reasoning["id"].startswith("rs_")
    assert reasoning["encrypted_content"] == "c2lnbmF0dXJlLWdvbGRlbg=="
    assert message["id"].startswith("msg_")
    assert message["content"] == [
        {"type": "output_text", "annotations": [], "logprobs": [], "text": "The answer is 42."}
    ]
    assert body["usage"] == {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 60,
        "output_tokens_details": {"reasoning_tokens": 35},
        "total_tokens": 80,
    }

    cut = json.loads(RESPONSES.encode_response(CASES["max_tokens"]))
    assert (cut["status"], cut["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})


def test_request_fields_are_echoed() -> None:
    request = {
        "model": "gpt-5-codex",
        "instructions": "Be terse.",
        "input": "hi",
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": False}],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "high", "summary": "auto"},
        "store": False,
        "stream": True,
        "prompt_cache_key": "k1",
        "text": {"verbosity": "low"},
        "max_output_tokens": 99,
    }
    body = json.loads(RESPONSES.encode_response(Completion(text="ok"), request))
    for key in ("model", "instructions", "tools", "tool_choice", "parallel_tool_calls", "reasoning", "store"):
        assert body[key] == request[key], key
    assert (body["prompt_cache_key"], body["text"], body["max_output_tokens"]) == ("k1", {"verbosity": "low"}, 99)
    assert "input" not in body
    assert "stream" not in body
    # the completion's own model wins over the requested alias
    assert json.loads(RESPONSES.encode_response(CASES["text"], request))["model"] == "golden-model"


def test_ids_are_stable() -> None:
    anonymous = Completion(text="same")
    assert RESPONSES.encode_response(anonymous) == RESPONSES.encode_response(Completion(text="same"))
    body = json.loads(RESPONSES.encode_response(anonymous))
    assert body["id"].startswith("resp_")
    assert body["id"] != json.loads(RESPONSES.encode_response(Completion(text="other")))["id"]
    assert RESPONSES.visible(anonymous).id == body["id"]


def test_error_keeps_a_code_of_its_kind() -> None:
    own = ProviderError(ErrorKind.QUOTA_EXCEEDED, "no credits", "usage_not_included")
    assert RESPONSES.visible(Completion(error=own)).error == own
    foreign = ProviderError(ErrorKind.OVERLOADED, "Overloaded", "overloaded_error", status=529)
    shown = RESPONSES.visible(Completion(error=foreign)).error
    assert shown == ProviderError(ErrorKind.OVERLOADED, "Overloaded", "server_is_overloaded")


def test_golden_cases_round_trip() -> None:
    for case in CASES.values():
        assert RESPONSES.decode_response(RESPONSES.encode_response(case)) == RESPONSES.visible(case)


# What Codex CLI 0.171.0 offers for an MCP server `notes` with one tool `lookup`, beside a tool of its own
# and its sub-agent namespace (whose `close_agent` an MCP server of the test has too)
CODEX_MCP_REQUEST: dict[str, Any] = {
    "model": "gpt-5-codex",
    "tools": [
        {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
        {"type": "namespace", "name": "multi_agent_v1", "tools": [{"type": "function", "name": "close_agent"}]},
        {
            "type": "namespace",
            "name": "mcp__notes",
            "description": "Tools in the mcp__notes namespace.",
            "tools": [
                {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}},
                {"type": "function", "name": "close_agent", "parameters": {"type": "object"}},
            ],
        },
    ],
}

FUNCTIONS: dict[str, Any] = {"type": "namespace", "name": "functions", "tools": [{"type": "function", "name": "exec"}]}


def _called(name: str, request: dict[str, Any] | None = CODEX_MCP_REQUEST) -> dict[str, Any]:
    """The function_call item the body and the stream give for a call of `name` answering `request`."""
    completion = Completion(id="resp_1", tool_calls=(ToolCall("call_1", name, {}),), stop_reason=StopReason.TOOL_USE)
    (item,) = json.loads(RESPONSES.encode_response(completion, request))["output"]
    events = [json.loads(event.split(b"data: ", 1)[1]) for event in RESPONSES.encode_stream(completion, request)]
    done = [event["item"] for event in events if event["type"] == "response.output_item.done"]
    added = [event["item"] for event in events if event["type"] == "response.output_item.added"]
    assert done == [item]
    assert added[0].get("namespace") == item.get("namespace")
    return dict(item)


def test_a_call_into_a_namespace_tool_names_its_namespace() -> None:
    """A model calls a member of a `namespace` tool by the member's name, the namespace beside it — how Codex
    CLI finds an MCP server's tool; without it Codex answers `unsupported call`. A script names it by the
    member's name, or by namespace and name joined by `__` (Claude Code's name for the same MCP tool)."""
    for scripted in ("lookup", "mcp__notes__lookup"):
        item = _called(scripted)
        assert (item["type"], item.get("namespace"), item["name"]) == ("function_call", "mcp__notes", "lookup")
    # a namespace named with its delimiter (later Codex versions): joined as it stands
    ending = json.loads(json.dumps(CODEX_MCP_REQUEST).replace('"mcp__notes"', '"mcp__notes__"'))
    assert (_called("mcp__notes__lookup", ending)["namespace"], _called("lookup", ending)["namespace"]) == (
        "mcp__notes__",
        "mcp__notes__",
    )


def test_a_call_outside_any_namespace_is_written_as_named() -> None:
    # a tool offered at the top level, one no tool offers, or no request: no namespace
    for name, request in (("exec_command", CODEX_MCP_REQUEST), ("nothing_offers_it", CODEX_MCP_REQUEST)):
        assert "namespace" not in _called(name, request)
    assert "namespace" not in _called("lookup", None)
    # Codex's own tools grouped as `functions` in an `additional_tools` item are plain functions
    codex = {"input": [{"type": "additional_tools", "tools": [*CODEX_MCP_REQUEST["tools"][1:], FUNCTIONS]}]}
    assert "namespace" not in _called("exec", codex)
    assert _called("lookup", codex)["namespace"] == "mcp__notes"
    # a member two namespaces hold is ambiguous by its name alone; qualified, it is not
    assert "namespace" not in _called("close_agent")
    assert _called("multi_agent_v1__close_agent")["namespace"] == "multi_agent_v1"
    assert (_called("mcp__notes__close_agent")["namespace"], _called("mcp__notes__close_agent")["name"]) == (
        "mcp__notes",
        "close_agent",
    )
