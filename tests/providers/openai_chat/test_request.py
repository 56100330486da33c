"""Request decoding, from fixtures written after the API's request body (docs/providers.md#openai-chat-completions)."""

from pathlib import Path

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import (
    AudioPart,
    Conversation,
    DocumentPart,
    ImagePart,
    Message,
    OtherPart,
    Role,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResultPart,
)
from llmproxy.providers.openai_chat import CHAT

FIXTURES = Path(__file__).parents[2] / "fixtures" / "requests" / "openai_chat"


def decode(name: str) -> Conversation:
    return CHAT.decode_request((FIXTURES / name).read_bytes())


def test_system_and_developer_messages_stay_in_the_list() -> None:
    conversation = decode("system_developer.json")
    assert conversation == Conversation(
        model="gpt-5-mini",
        messages=(
            Message(Role.SYSTEM, (TextPart("You are terse."),)),
            Message(Role.DEVELOPER, (TextPart("Answer in French."), TextPart(" Never use emoji."))),
            Message(Role.USER, (TextPart("What is the capital of Italy?"),)),
        ),
        max_output_tokens=256,
        reasoning_requested=True,
    )
    assert conversation.system == ()
    assert conversation.messages[1].text == "Answer in French. Never use emoji."


def test_images_inline_and_by_url() -> None:
    conversation = decode("images.json")
    assert conversation.max_output_tokens == 300  # legacy max_tokens
    assert conversation.reasoning_requested is False
    (message,) = conversation.messages
    assert message.parts == (
        TextPart("Compare these two images."),
        ImagePart(
            media_type="image/png",
            data="iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
            detail="high",
        ),
        ImagePart(url="https://example.com/cat.jpg"),
    )


def test_audio_and_files() -> None:
    conversation = decode("audio_and_files.json")
    assert conversation.reasoning_requested is False  # reasoning_effort "none" asks for none
    (message,) = conversation.messages
    assert message.parts == (
        AudioPart("UklGRiQAAABXQVZFZm10IBAAAAABAAEA", "wav"),
        DocumentPart(media_type="application/pdf", data="JVBERi0xLjQK", title="report.pdf"),
        DocumentPart(file_id="file-abc123"),
        TextPart("Summarise the recording and both files."),
    )


def test_tool_calls_results_and_tools() -> None:
    conversation = decode("tool_round_trip.json")
    assert conversation.stream is True
    assert conversation.max_output_tokens is None
    user, assistant, paris, tokyo, refusal = conversation.messages
    assert user == Message(Role.USER, (TextPart("Weather in Paris and Tokyo?"),))
    assert assistant == Message(
        Role.ASSISTANT,
        (
            ToolCall("call_paris", "get_weather", {"city": "Paris"}),
            ToolCall("call_tokyo", "get_weather", {}, invalid_arguments='{"city": "Tok'),
        ),
    )
    assert paris == Message(Role.TOOL, (ToolResultPart("call_paris", (TextPart("20C, sunny"),), name="get_weather"),))
    assert tokyo.role is Role.TOOL
    (result,) = tokyo.tool_results
    assert (result.tool_call_id, result.name, result.text) == ("call_tokyo", "get_weather", "error: bad arguments")
    assert refusal == Message(Role.ASSISTANT, (TextPart("I can't retry that."),))
    assert conversation.tools == (
        ToolDefinition(
            "get_weather",
            "Current weather for a city.",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        ),
        ToolDefinition("apply_patch", "Apply a unified diff.", kind="custom"),
    )
    assert conversation.assistant_turns == 2


def test_legacy_functions() -> None:
    conversation = decode("legacy_functions.json")
    _, call, result = conversation.messages
    assert call.tool_calls == (ToolCall("", "add", {"a": 2, "b": 3}),)
    assert result == Message(Role.TOOL, (ToolResultPart("", (TextPart("5"),), name="add"),))
    assert conversation.tools == (
        ToolDefinition(
            "add", None, {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}
        ),
    )


def test_unknown_parts_are_kept_whole_and_assistant_audio_too() -> None:
    body = (
        b'{"model":"m","messages":[{"role":"user","content":[{"type":"future","x":1}]},'
        b'{"role":"assistant","content":"","audio":{"id":"audio_1"}}]}'
    )
    user, assistant = CHAT.decode_request(body).messages
    assert user.parts == (OtherPart("future", {"type": "future", "x": 1}),)
    assert assistant.parts == (OtherPart("audio", {"id": "audio_1"}),)


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b"[]", "$: expected an object"),
        (b'{"messages":[{"role":"robot","content":"hi"}]}', "$.messages[0].role"),
        (b'{"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}', "$.messages[0].content[0].text"),
        (b'{"messages":[{"role":"tool","content":"x"}]}', "$.messages[0].tool_call_id"),
        (b'{"messages":[],"stream":"yes"}', "$.stream"),
        (b'{"messages":[],"max_completion_tokens":1.5}', "$.max_completion_tokens"),
        (
            b'{"messages":[],"tools":[{"type":"function","function":{"description":"no name"}}]}',
            "$.tools[0].function.name",
        ),
    ],
)
def test_bad_shapes_name_the_json_path(body: bytes, where: str) -> None:
    with pytest.raises(ParseError, match="openai chat request") as caught:
        CHAT.decode_request(body)
    assert where in str(caught.value)
