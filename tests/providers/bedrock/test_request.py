"""Converse request decoding: every content block kind, cache points, and refusals with a path."""

import json
from pathlib import Path

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import (
    AudioPart,
    CacheControl,
    DocumentPart,
    ImagePart,
    OtherPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolCall,
    ToolResultPart,
)
from llmproxy.providers.bedrock import CONVERSE

FIXTURES = Path(__file__).parents[2] / "fixtures" / "requests" / "bedrock_converse"


def test_tool_round_trip_fixture() -> None:
    conversation = CONVERSE.decode_request((FIXTURES / "tool_round_trip.json").read_bytes())
    assert conversation.model is None  # the URL names it
    assert conversation.system == (TextPart("You are a weather bot.", CacheControl(ttl="1h")),)
    assert conversation.max_output_tokens == 512
    assert conversation.reasoning_requested
    user, assistant, result = conversation.messages
    assert user.parts == (TextPart("What is the weather in Paris?", CacheControl()),)
    assert assistant.parts == (
        ReasoningPart("I should call the tool.", "c2ln"),
        TextPart("Let me check."),
        ToolCall("tooluse_1", "get_weather", {"city": "Paris"}),
    )
    assert result.role is Role.USER
    assert result.parts == (
        ToolResultPart("tooluse_1", (TextPart('{"temperature":21,"unit":"c"}'), TextPart("sunny")), name="get_weather"),
    )
    (tool,) = conversation.tools
    assert (tool.name, tool.cache_control, tool.parameters and tool.parameters["required"]) == (
        "get_weather",
        CacheControl(),
        ["city"],
    )


def test_media_fixture() -> None:
    conversation = CONVERSE.decode_request((FIXTURES / "media.json").read_bytes())
    parts = conversation.messages[0].parts
    assert parts[1] == ImagePart("image/png", data="iVBORw0KGgo=")
    assert parts[2] == ImagePart("image/jpeg", url="s3://bucket/cat.jpg")
    assert parts[3] == DocumentPart("application/pdf", data="JVBERi0xLjQ=", title="report")
    assert parts[4] == DocumentPart("text/plain", text="plain notes", title="notes")
    assert isinstance(parts[5], OtherPart)  # block-list document content
    assert parts[6] == AudioPart("UklGRg==", "wav")
    assert [p.kind for p in parts[7:] if isinstance(p, OtherPart)] == ["video", "guardContent"]
    assert conversation.messages[1].parts[0] == ReasoningPart(signature="cmVkYWN0ZWQ=", redacted=True)
    assert conversation.messages[2].tool_results[0].is_error
    assert conversation.tools[0].kind == "systemTool"
    assert conversation.reasoning_requested


def test_a_leading_cache_point_is_kept_whole() -> None:
    body = {"messages": [{"role": "user", "content": [{"cachePoint": {"type": "default"}}, {"text": "x"}]}]}
    parts = CONVERSE.decode_request(json.dumps(body).encode()).messages[0].parts
    assert parts == (OtherPart("cachePoint", {"cachePoint": {"type": "default"}}), TextPart("x"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"messages": {}}, r"\$.messages: expected a list of messages"),
        (
            {"messages": [{"role": "system", "content": []}]},
            r"\$.messages\[0\].role: expected \"user\" or \"assistant\"",
        ),
        (
            {"messages": [{"role": "user", "content": [{"text": "a", "image": {}}]}]},
            r"\$.messages\[0\].content\[0\]: expected an object with exactly one member set",
        ),
        (
            {"messages": [{"role": "user", "content": [{"toolUse": {"toolUseId": "t", "name": "n", "input": []}}]}]},
            r"\$.messages\[0\].content\[0\].toolUse.input: expected an object",
        ),
    ],
)
def test_bad_requests_name_the_path(body: object, message: str) -> None:
    with pytest.raises(ParseError, match=f"bedrock converse request: {message}"):
        CONVERSE.decode_request(json.dumps(body).encode())
