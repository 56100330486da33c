"""Decoding generateContent request bodies: as google-genai sends them (mixed casing) and in REST snake_case."""

import json
from pathlib import Path

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import (
    AudioPart,
    DocumentPart,
    ImagePart,
    OtherPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResultPart,
)
from llmproxy.providers.gemini import GENERATE

FIXTURES = Path(__file__).parents[2] / "fixtures" / "requests" / "gemini"


def test_sdk_request_with_tools_thoughts_and_media() -> None:
    conversation = GENERATE.decode_request((FIXTURES / "sdk-tools-thoughts-media.json").read_bytes())
    assert conversation.model is None  # the URL names it
    assert conversation.stream is False  # the URL decides
    assert conversation.system == (TextPart("You are terse."),)
    assert (conversation.max_output_tokens, conversation.reasoning_requested) == (256, True)
    assert [m.role for m in conversation.messages] == [Role.USER, Role.ASSISTANT, Role.USER, Role.USER]
    first, model, result, last = conversation.messages
    assert first.parts[1] == ImagePart("image/png", data="iVBORyBmYWtl")  # inlineData with mime_type
    assert model.parts == (
        ReasoningPart("Let me check."),
        ReasoningPart(signature="c2lnLWJ5dGVz"),
        ToolCall("call_1", "get_weather", {"city": "Paris"}),
    )
    assert result.parts == (ToolResultPart("", (TextPart("20C, sunny"),), name="get_weather"),)
    assert last.parts[0] == DocumentPart("application/pdf", url="gs://bucket/report.pdf")
    assert conversation.tools == (
        ToolDefinition("googleSearch", kind="googleSearch"),
        ToolDefinition(
            "get_weather",
            "Current weather for a city.",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        ),
    )


def test_rest_snake_case_request() -> None:
    conversation = GENERATE.decode_request((FIXTURES / "rest-snake-case.json").read_bytes())
    assert conversation.system_text == "You run code.\nAnswer briefly."
    assert (conversation.max_output_tokens, conversation.reasoning_requested) == (64, True)  # budget -1: dynamic
    user, model, function, follow_up = conversation.messages
    assert user.parts[1:] == (AudioPart("UklGRg==", "wav"), ImagePart("image/jpeg", url="https://example.com/cat.jpg"))
    assert model.parts[0] == ReasoningPart("Planning the computation.", "dGhvdWdodA==")
    assert [type(p) for p in model.parts[1:3]] == [OtherPart, OtherPart]
    assert [p.kind for p in model.parts[1:3]] == ["executable_code", "code_execution_result"]  # type: ignore[union-attr]
    assert model.parts[3:] == (ReasoningPart(signature="Y2FsbA=="), ToolCall("fc_7", "transcribe", {"format": "text"}))
    assert function.role is Role.TOOL
    (result,) = function.tool_results
    assert (result.tool_call_id, result.name, result.is_error) == ("fc_7", "transcribe", True)
    assert json.loads(result.text) == {"error": "unsupported codec"}
    assert follow_up.role is Role.USER  # no role: a user turn
    assert [t.kind for t in conversation.tools] == ["function", "code_execution"]
    assert conversation.tools[0].parameters == {"type": "OBJECT", "properties": {"format": {"type": "STRING"}}}


def test_repeated_fields_given_as_one_object() -> None:
    """The API (proto-JSON) takes a lone value for a repeated field: `tools` as one Tool, `parts` as one Part."""
    declaration = {"name": "get_capital", "description": "Get the capital", "parameters": {"type": "OBJECT"}}
    body = {
        "contents": {"role": "user", "parts": {"text": "Capital of France?"}},
        "tools": {"function_declarations": declaration},
    }
    conversation = GENERATE.decode_request(json.dumps(body).encode())
    assert [m.text for m in conversation.messages] == ["Capital of France?"]
    assert [(t.name, t.description) for t in conversation.tools] == [("get_capital", "Get the capital")]


def test_no_thinking_asked() -> None:
    body = {"contents": [], "generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}}
    assert GENERATE.decode_request(json.dumps(body).encode()).reasoning_requested is False


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({}, r"\$\.contents: expected a list of contents"),
        ({"contents": "hi"}, r"\$\.contents: expected a list of contents"),
        (
            {"contents": [{"role": "assistant", "parts": []}]},
            r"contents\[0\]\.role: expected \"user\" or",
        ),
        ({"contents": [{"parts": [{"text": 1}]}]}, r"\$\.contents\[0\]\.parts\[0\]\.text: expected a string"),
        (
            {"contents": [{"parts": [{"inlineData": {"mimeType": "a/b"}}]}]},
            r"inlineData\.data: expected a string",
        ),
        ({"contents": [{"parts": [{"functionCall": {"args": []}}]}]}, r"functionCall\.args: expected an object"),
        ({"contents": [], "systemInstruction": {"parts": [{"inlineData": {}}]}}, r"parts\[0\]\.text: expected a str"),
        ({"contents": [], "generation_config": {"max_output_tokens": "9"}}, r"max_output_tokens: expected an int"),
    ],
)
def test_bad_requests_name_the_field(body: object, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        GENERATE.decode_request(json.dumps(body).encode())
