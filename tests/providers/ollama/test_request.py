"""Ollama request bodies as SDKs and CLIs send them, decoded into Conversations."""

import json
from pathlib import Path

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import ImagePart, OtherPart, ReasoningPart, Role, TextPart, ToolCall, ToolResultPart
from llmproxy.providers.ollama import CHAT, GENERATE

FIXTURES = Path(__file__).parents[2] / "fixtures" / "requests" / "ollama"


def test_chat_tool_round_trip() -> None:
    conversation = CHAT.decode_request((FIXTURES / "chat_tool_round_trip.json").read_bytes())
    assert conversation.model == "qwen3:8b"
    assert [m.role for m in conversation.messages] == [Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL, Role.TOOL]
    assistant = conversation.messages[2]
    assert assistant.parts == (
        ReasoningPart("Two cities: call the tool twice."),
        ToolCall("call_a", "get_weather", {"city": "Paris"}),
        ToolCall("", "get_weather", {"city": "Tokyo", "days": [1, 2]}),
    )
    assert conversation.messages[3].parts == (
        ToolResultPart("call_a", (TextPart("18 degrees, sunny"),), name="get_weather"),
    )
    assert conversation.messages[4].tool_results[0].name == "get_weather"
    assert conversation.tools[0].name == "get_weather"
    assert conversation.tools[0].parameters is not None
    assert (conversation.stream, conversation.max_output_tokens, conversation.reasoning_requested) == (True, 256, True)


def test_chat_images_and_settings() -> None:
    conversation = CHAT.decode_request((FIXTURES / "chat_images_format.json").read_bytes())
    (message,) = conversation.messages
    assert isinstance(message.parts[1], ImagePart)
    assert message.parts[1].data is not None
    assert message.parts[1].media_type is None
    # num_predict -1 means no cap; think "low" asks for thinking
    assert (conversation.stream, conversation.max_output_tokens, conversation.reasoning_requested) == (
        False,
        None,
        True,
    )


def test_generate_prompt_system_suffix_context() -> None:
    conversation = GENERATE.decode_request((FIXTURES / "generate_fim.json").read_bytes())
    assert conversation.system_text == "Complete the code."
    (message,) = conversation.messages
    assert message.parts == (
        TextPart("def fib(n):\n    "),
        ImagePart(data="aGVsbG8="),
        OtherPart("suffix", {"suffix": "\n    return result\n"}),
        OtherPart("context", {"context": [1, 2, 3, 42]}),
    )
    assert (conversation.stream, conversation.max_output_tokens) == (True, 64)


def test_generate_plain_streams_by_default_and_think_false() -> None:
    conversation = GENERATE.decode_request((FIXTURES / "generate_plain.json").read_bytes())
    assert (conversation.stream, conversation.reasoning_requested) == (True, False)
    assert conversation.messages[0].text == "Why is the sky blue?"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"messages": [{"role": "robot", "content": "x"}]}, r"\$\.messages\[0\]\.role: expected \"system\""),
        ({"messages": [{"role": "user", "images": [1]}]}, r"\$\.messages\[0\]\.images\[0\]: expected a string"),
        ({"messages": [], "think": 1}, r"\$\.think: expected true, false"),
        ({"messages": [], "options": {"num_predict": "many"}}, r"\$\.options\.num_predict: expected an integer"),
        (
            {"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}]},
            r"\$\.messages\[0\]\.tool_calls\[0\]\.function\.arguments: expected an object",
        ),
    ],
)
def test_bad_chat_requests_name_the_field(body: object, message: str) -> None:
    with pytest.raises(ParseError, match=rf"^ollama chat request: {message}"):
        CHAT.decode_request(json.dumps(body).encode())


def test_bad_generate_context() -> None:
    with pytest.raises(ParseError, match=r"^ollama generate request: \$\.context\[1\]: expected an integer"):
        GENERATE.decode_request(b'{"prompt": "x", "context": [1, "2"]}')
