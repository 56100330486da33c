"""Request decoding: bodies as Codex CLI and the openai SDK send them, and shapes that must be refused."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import (
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
from llmproxy.providers.openai_responses import RESPONSES

FIXTURES = Path(__file__).parents[2] / "fixtures"
REQUESTS = FIXTURES / "requests" / "openai_responses"


def load(name: str) -> bytes:
    return (REQUESTS / name).read_bytes()


def test_codex_cli_turn_with_tool_history() -> None:
    body = json.loads(load("codex-cli-tool-history.json"))
    conversation = RESPONSES.decode_request(load("codex-cli-tool-history.json"))

    assert conversation.model == "gpt-5-codex"
    assert conversation.stream is True
    assert conversation.reasoning_requested is True
    assert conversation.max_output_tokens is None
    assert conversation.system_text == body["instructions"]
    assert [m.role for m in conversation.messages] == [
        Role.DEVELOPER,
        Role.USER,
        Role.USER,
        Role.ASSISTANT,  # reasoning + one call
        Role.TOOL,
        Role.ASSISTANT,  # reasoning + two parallel calls, one message
        Role.TOOL,  # both outputs, one message
        Role.ASSISTANT,  # apply_patch custom tool call
        Role.TOOL,
        Role.ASSISTANT,
        Role.USER,
    ]
    messages = conversation.messages
    assert messages[0].text == body["input"][0]["content"][0]["text"]
    assert messages[2] == Message(Role.USER, (TextPart("list the files, then show both"),))
    assert messages[3].parts == (
        ReasoningPart(text="**Listing files**\n\nI'll run ls in the workspace.", signature="gAAAAABpReasoningOne=="),
        ToolCall("call_ls01", "exec_command", {"cmd": "ls", "workdir": "/tmp/proj"}),
    )
    ls_output = body["input"][5]["output"]
    assert messages[4].parts == (ToolResultPart("call_ls01", (TextPart(ls_output),), name="exec_command"),)
    assert messages[5].parts == (
        ReasoningPart(text="", signature="gAAAAABpReasoningTwo=="),
        ToolCall("call_cat01", "exec_command", {"cmd": "cat README.md"}),
        ToolCall("call_cat02", "exec_command", {"cmd": "cat main.py"}),
    )
    assert messages[6].parts == (
        ToolResultPart("call_cat01", (TextPart("# demo\n"),), name="exec_command"),
        ToolResultPart("call_cat02", (TextPart("print('hi')\n"),), name="exec_command"),
    )
    assert messages[7].parts == (OtherPart("custom_tool_call", body["input"][11]),)
    assert messages[8].parts == (OtherPart("custom_tool_call_output", body["input"][12]),)
    assert messages[9] == Message(Role.ASSISTANT, (TextPart("README.md says `# demo`; main.py prints hi."),))
    assert conversation.latest == Message(Role.USER, (TextPart("thanks"),))
    assert conversation.assistant_turns == 4

    exec_command = body["tools"][0]
    assert [(t.kind, t.name) for t in conversation.tools] == [
        ("function", "exec_command"),
        ("custom", "apply_patch"),
        ("function", "close_agent"),  # the members of the multi_agent_v1 namespace
        ("function", "resume_agent"),
        ("web_search", "web_search"),
    ]
    assert conversation.tools[0] == ToolDefinition(
        "exec_command", exec_command["description"], exec_command["parameters"]
    )
    assert conversation.tools[1].description == "Use the `apply_patch` tool to edit files."
    assert conversation.tools[1].parameters is None


def test_captured_codex_tool_result_turn() -> None:
    """The second request Codex CLI 0.169.0 really sent: it echoes our output items back with their ids,
    has no instructions, and groups its sub-agent tools in a namespace."""
    captured = json.loads((FIXTURES / "captured" / "codex-0.169.0-turn2.json").read_bytes())["body"]
    conversation = RESPONSES.decode_request(json.dumps(captured).encode())
    assert conversation.system == ()
    assert [m.role for m in conversation.messages] == [
        Role.DEVELOPER,
        Role.DEVELOPER,
        Role.USER,
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
    ]
    assert conversation.messages[4].parts == (
        TextPart("Running it."),
        ToolCall("call_capture_1", "exec_command", {"cmd": "echo llmproxy-ok"}),
    )
    output = captured["input"][-1]["output"]
    assert conversation.messages[5].parts == (
        ToolResultPart("call_capture_1", (TextPart(output),), name="exec_command"),
    )
    names = [t.name for t in conversation.tools]
    namespace = next(t for t in captured["tools"] if t["type"] == "namespace")
    members = [member["name"] for member in namespace["tools"]]
    assert [name for name in names if name in members] == members
    assert namespace["name"] not in names
    assert conversation.tools[-1] == ToolDefinition("web_search", kind="web_search")


def test_sdk_plain_string_input() -> None:
    conversation = RESPONSES.decode_request(load("sdk-plain.json"))
    assert conversation.model == "gpt-4.1-mini"
    assert conversation.system == (TextPart("Be brief."),)
    assert conversation.messages == (Message(Role.USER, (TextPart("Tell me a joke about proxies."),)),)
    assert conversation.max_output_tokens == 200
    assert conversation.stream is False
    assert conversation.reasoning_requested is False
    assert conversation.tools == ()


def test_sdk_multimodal_history() -> None:
    conversation = RESPONSES.decode_request(load("sdk-multimodal-history.json"))
    assert conversation.model == "o4-mini"
    assert conversation.system == ()
    assert conversation.reasoning_requested is True
    system, user, assistant, question, call, result = conversation.messages
    assert system == Message(Role.SYSTEM, (TextPart("You describe images."),))
    assert user == Message(
        Role.USER,
        (
            TextPart("What is in these?"),
            ImagePart(media_type="image/png", data="iVBORw0KGgo=", detail="low"),
            ImagePart(url="https://example.com/cat.jpg", detail="auto"),
            ImagePart(file_id="file-img1", detail="high"),
            DocumentPart(media_type="application/pdf", data="JVBERi0x", title="a.pdf"),
            DocumentPart(file_id="file-doc2"),
        ),
    )
    # reasoning and the assistant message are one assistant turn
    assert assistant == Message(
        Role.ASSISTANT,
        (ReasoningPart("Look closely.\n\nThen answer.", id="rs_prev1"), TextPart("A cat and a PDF.")),
    )
    assert question == Message(Role.USER, (TextPart("And the weather in Paris?"),))
    assert call == Message(Role.ASSISTANT, (ToolCall("call_w1", "get_weather", {"city": "Paris"}),))
    assert result == Message(Role.TOOL, (ToolResultPart("call_w1", (TextPart("20C, sunny"),), name="get_weather"),))
    assert conversation.tools == (
        ToolDefinition(
            "get_weather",
            "Weather for a city",
            {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        ),
        ToolDefinition("web_search", kind="web_search"),
    )


def test_invalid_call_arguments_are_kept_verbatim() -> None:
    body = {
        "model": "m",
        "input": [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a": '}],
    }
    (message,) = RESPONSES.decode_request(json.dumps(body).encode()).messages
    assert message.parts == (ToolCall("c1", "f", {}, invalid_arguments='{"a": '),)


def test_file_url_and_bare_base64_file_data() -> None:
    parts: list[dict[str, Any]] = [
        {"type": "input_file", "file_url": "https://example.com/a.pdf"},
        {"type": "input_file", "file_data": "JVBERi0x", "filename": "b.pdf"},
        {"type": "input_audio", "input_audio": {"data": "AAA=", "format": "wav"}},
    ]
    body = {"input": [{"role": "user", "content": parts}]}
    (message,) = RESPONSES.decode_request(json.dumps(body).encode()).messages
    assert message.parts == (
        DocumentPart(url="https://example.com/a.pdf"),
        DocumentPart(data="JVBERi0x", title="b.pdf"),
        OtherPart("input_audio", parts[2]),
    )


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ([], "$: expected an object"),
        ({"input": [{"role": "robot", "content": "hi"}]}, "$.input[0].role"),
        ({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]}, "$.input[0].call_id"),
        ({"input": [{"role": "user", "content": 3}]}, "$.input[0].content"),
        ({"input": [{"role": "user", "content": [{"type": "input_text"}]}]}, "$.input[0].content[0].text"),
        ({"input": "hi", "tools": [{"type": "function"}]}, "$.tools[0].name"),
        ({"input": "hi", "stream": "yes"}, "$.stream"),
        ({"input": 7}, "$.input"),
    ],
)
def test_bad_shapes_name_the_path(body: object, where: str) -> None:
    with pytest.raises(ParseError, match=rf"openai responses request: {re.escape(where)}"):
        RESPONSES.decode_request(json.dumps(body).encode())


def test_only_what_the_model_produced_counts_as_an_assistant_turn() -> None:
    """Items the client adds (Codex's `additional_tools` and `configuration_update`, an `item_reference`) are
    context, not assistant turns; calls, reasoning and compactions are the model's whatever role they name."""
    body = {
        "model": "m",
        "input": [
            {"type": "additional_tools", "role": "developer", "tools": [{"type": "function", "name": "f"}]},
            {"type": "configuration_update", "model": "gpt-6"},
            {"type": "item_reference", "id": "msg_1"},
            {"role": "user", "content": "go"},
            {"type": "compaction", "encrypted_content": "x"},
            {"type": "user_shell_call", "role": "user", "action": {}},
            {"type": "user_shell_call_output", "output": "ok"},
        ],
    }
    conversation = RESPONSES.decode_request(json.dumps(body).encode())
    assert [m.role for m in conversation.messages] == [
        Role.DEVELOPER,
        Role.DEVELOPER,
        Role.DEVELOPER,
        Role.USER,
        Role.ASSISTANT,  # the compaction and the call, one turn
        Role.TOOL,
    ]
    assert conversation.assistant_turns == RESPONSES.assistant_turns(body) == 1
    assert [t.name for t in conversation.tools] == ["f"]  # offered in the input, as Codex does
