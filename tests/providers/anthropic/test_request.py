"""Anthropic request bodies, as Claude Code and the SDKs send them, decoded into Conversations."""

from pathlib import Path

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import (
    CacheControl,
    Conversation,
    DocumentPart,
    ImagePart,
    Message,
    OtherPart,
    ReasoningPart,
    Role,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResultPart,
)
from llmproxy.providers.anthropic import MESSAGES

FIXTURES = Path(__file__).parents[2] / "fixtures" / "requests" / "anthropic"


def decode(name: str) -> Conversation:
    return MESSAGES.decode_request((FIXTURES / name).read_bytes())


def test_claude_code_turn() -> None:
    conversation = decode("claude_code_turn.json")
    assert conversation.model == "claude-sonnet-4-5-20250929"
    assert conversation.stream is True
    assert conversation.max_output_tokens == 32000
    assert conversation.reasoning_requested is True
    assert conversation.system == (
        TextPart("You are Claude Code, Anthropic's official CLI for Claude.", CacheControl()),
        TextPart("Working directory: /home/dev/project", CacheControl(ttl="1h")),
    )
    assert conversation.messages == (
        Message(
            Role.USER,
            (
                TextPart("<system-reminder>Project notes.</system-reminder>"),
                TextPart("Run the tests and fix what fails.", CacheControl()),
            ),
        ),
        Message(
            Role.ASSISTANT,
            (
                ReasoningPart("Run pytest first.", signature="EqQBCkYIBxgCKkBsig1"),
                TextPart("Running the tests."),
                ToolCall("toolu_01A", "Bash", {"command": "pytest -q", "description": "Run tests"}),
            ),
        ),
        Message(
            Role.USER,
            (
                ToolResultPart("toolu_01A", (TextPart("1 failed, 9 passed"),), name="Bash"),
                TextPart("Go on."),
            ),
        ),
        Message(
            Role.ASSISTANT,
            (
                ReasoningPart(signature="RVJFREFDVEVE", redacted=True),
                ToolCall("toolu_01B", "Read", {"file_path": "/home/dev/project/app.py"}, cache_control=CacheControl()),
            ),
        ),
        Message(
            Role.USER,
            (
                ToolResultPart(
                    "toolu_01B",
                    (TextPart("File does not exist."),),
                    is_error=True,
                    name="Read",
                    cache_control=CacheControl(ttl="5m"),
                ),
            ),
        ),
    )
    assert [(t.name, t.kind) for t in conversation.tools] == [
        ("Bash", "function"),
        ("Read", "function"),
        ("Edit", "function"),
        ("web_search", "web_search_20250305"),
    ]
    bash, _, edit, search = conversation.tools
    assert bash.description == "Executes a bash command."
    assert bash.parameters is not None
    assert bash.parameters["required"] == ["command"]
    assert edit.cache_control == CacheControl()
    assert search == ToolDefinition(name="web_search", kind="web_search_20250305")
    assert conversation.assistant_turns == 2
    assert conversation.latest is not None
    assert conversation.latest.text == "File does not exist."


def test_media_documents_and_server_tools() -> None:
    conversation = decode("media_and_server_tools.json")
    assert conversation.system == (TextPart("You describe images."),)
    assert conversation.reasoning_requested is True  # adaptive thinking
    assert conversation.stream is False
    first, assistant, results, thanks = conversation.messages
    assert first.parts == (
        ImagePart("image/png", data="iVBORw0KGgo=", cache_control=CacheControl()),
        ImagePart(url="https://example.com/cat.jpg"),
        ImagePart(file_id="file_011"),
        DocumentPart("application/pdf", data="JVBERi0x", title="Spec"),
        DocumentPart("text/plain", text="plain words"),
        DocumentPart(url="https://example.com/a.pdf"),
        OtherPart(
            "document",
            {"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": "chunk"}]}},
        ),
        TextPart("What is in these?"),
    )
    server_use, server_result, zoom = assistant.parts
    assert server_use == OtherPart(
        "server_tool_use",
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "cats"}},
    )
    assert isinstance(server_result, OtherPart)
    assert server_result.kind == "web_search_tool_result"
    # The documented INVALID_JSON wrapper is how clients send back arguments that were not JSON.
    assert zoom == ToolCall("toolu_9", "zoom", {}, invalid_arguments='{"level": 3')
    assert results.parts == (
        ToolResultPart("toolu_9", (TextPart("zoomed"), ImagePart("image/jpeg", data="/9j/")), name="zoom"),
        ToolResultPart("toolu_unknown"),
    )
    assert thanks == Message(Role.USER, (TextPart("Thanks!"),))
    assert conversation.tools == (
        ToolDefinition(
            "zoom", parameters={"type": "object", "properties": {"level": {"type": "integer"}}}, kind="function"
        ),
        ToolDefinition("bash", kind="bash_20250124"),
        ToolDefinition("str_replace_based_edit_tool", kind="text_editor_20250728", cache_control=CacheControl()),
    )


def test_reference_example() -> None:
    conversation = decode("weather.json")
    assert conversation.model == "claude-x"
    assert conversation.reasoning_requested is False
    assert conversation.system_text == "You are terse."
    assert conversation.messages[-1].tool_results == (
        ToolResultPart("toolu_01", (TextPart("20C"),), name="get_weather"),
    )
    assert conversation.tools[0].parameters == {"type": "object", "properties": {"city": {"type": "string"}}}


def test_disabled_thinking_and_missing_max_tokens() -> None:
    body = b'{"model":"m","messages":[],"thinking":{"type":"disabled"}}'
    conversation = MESSAGES.decode_request(body)
    assert conversation.reasoning_requested is False
    assert conversation.max_output_tokens is None
    assert conversation.messages == ()


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b"[]", "$: expected an object"),
        (b'{"model":"m"}', "$.messages: expected a list"),
        (b'{"messages":[{"role":"robot","content":"x"}]}', "$.messages[0].role"),
        (b'{"messages":[{"role":"user","content":3}]}', "$.messages[0].content"),
        (b'{"messages":[{"role":"user","content":[{"text":"x"}]}]}', "$.messages[0].content[0].type"),
        (b'{"messages":[],"system":[{"type":"image"}]}', "$.system[0].type"),
        (b'{"messages":[],"max_tokens":"9"}', "$.max_tokens: expected an integer"),
        (b'{"messages":[],"tools":[{"input_schema":{}}]}', "$.tools[0].name"),
        (
            b'{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"b","input":"{}"}]}]}',
            "$.messages[0].content[0].input",
        ),
        (b'{"messages":[],"system":[{"type":"text","text":"x","cache_control":1}]}', "cache_control"),
        (b"\xff", "not valid JSON"),
    ],
)
def test_bad_shapes_name_the_path(body: bytes, where: str) -> None:
    with pytest.raises(ParseError, match="anthropic request") as info:
        MESSAGES.decode_request(body)
    assert where in str(info.value)
