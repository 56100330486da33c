"""Decoding requests exactly as the real coding CLIs send them.

The fixtures were captured from Claude Code, Codex CLI, the Gemini CLI (on Code Assist) and opencode (on
Anthropic) running a tool loop against llmproxy's own encodings (scripts/capture_cli_requests.py): turn 1 is the
opening request, turn 2 carries the tool result.
"""

import json
from pathlib import Path
from typing import Any

import pytest

from llmproxy.model import Conversation, ReasoningPart, Role, TextPart, ToolCall, ToolResultPart
from llmproxy.providers.registry import CHAT_CODECS

CAPTURED = Path(__file__).parent.parent / "fixtures" / "captured"


def load(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((CAPTURED / name).read_text())["body"]
    return body


def decode(codec: str, body: dict[str, Any]) -> Conversation:
    return CHAT_CODECS[codec].decode_request(json.dumps(body).encode())


CLAUDE_VERSIONS = ("2.1.197", "2.1.332")


@pytest.mark.parametrize("version", CLAUDE_VERSIONS)
def test_claude_code_first_turn(version: str) -> None:
    body = load(f"claude-{version}-turn1.json")
    conversation = decode("anthropic-messages", body)
    assert conversation.model == body["model"]
    assert conversation.stream is True
    assert conversation.max_output_tokens == body["max_tokens"]
    assert conversation.reasoning_requested is True  # thinking: adaptive
    # system blocks, one of them a cache breakpoint
    assert [p.text for p in conversation.system] == [block["text"] for block in body["system"]]
    assert [p.cache_control is not None for p in conversation.system] == [
        "cache_control" in block for block in body["system"]
    ]
    # Claude Code puts a mid-conversation system message after the user turn
    assert [m.role for m in conversation.messages] == [Role.USER, Role.SYSTEM]
    prompt = conversation.messages[0].parts[-1]
    assert isinstance(prompt, TextPart)
    assert prompt.text == "Run `echo llmproxy-ok` with Bash, then tell me what it printed."
    # a cache breakpoint on the prompt where this version puts one (2.1.197 did, 2.1.332 does not)
    assert (prompt.cache_control is not None) == ("cache_control" in body["messages"][0]["content"][-1])
    assert [t.name for t in conversation.tools] == [t["name"] for t in body["tools"]]
    bash = next(t for t in conversation.tools if t.name == "Bash")
    assert bash.parameters is not None
    assert "command" in bash.parameters["properties"]


@pytest.mark.parametrize("version", CLAUDE_VERSIONS)
def test_claude_code_tool_result_turn(version: str) -> None:
    conversation = decode("anthropic-messages", load(f"claude-{version}-turn2.json"))
    assert conversation.assistant_turns == 1
    assistant = next(m for m in conversation.messages if m.role is Role.ASSISTANT)
    assert assistant.text == "Running it."
    assert assistant.tool_calls == (
        ToolCall("call_capture_1", "Bash", {"command": "echo llmproxy-ok", "description": "Print a marker"}),
    )
    latest = conversation.latest
    assert latest is not None
    assert latest.role is Role.USER
    (result,) = latest.tool_results
    assert result.tool_call_id == "call_capture_1"
    assert result.name == "Bash"  # filled from the call: the wire sends only the id
    assert result.text.strip() == "llmproxy-ok"
    assert result.is_error is False


def test_codex_first_turn() -> None:
    body = load("codex-0.169.0-turn1.json")
    conversation = decode("openai-responses", body)
    assert conversation.model == body["model"]
    assert conversation.stream is True
    assert conversation.reasoning_requested is True
    assert conversation.system == ()  # Codex 0.169 sends its instructions as developer messages
    assert [m.role for m in conversation.messages] == [Role.DEVELOPER, Role.DEVELOPER, Role.USER, Role.USER]
    assert conversation.messages[-1].text == "Run `echo llmproxy-ok`, then tell me what it printed."
    names = {t.name for t in conversation.tools}
    assert {"exec_command", "write_stdin", "web_search"} <= names


def test_codex_tool_result_turn() -> None:
    conversation = decode("openai-responses", load("codex-0.169.0-turn2.json"))
    assert conversation.assistant_turns == 1  # the text item and its function_call form one turn
    calls = [call for m in conversation.messages for call in m.tool_calls]
    assert calls == [ToolCall("call_capture_1", "exec_command", {"cmd": "echo llmproxy-ok"})]
    latest = conversation.latest
    assert latest is not None
    assert latest.role is Role.TOOL
    (result,) = latest.parts
    assert isinstance(result, ToolResultPart)
    assert result.name == "exec_command"
    assert "llmproxy-ok" in result.text


def test_codex_websocket_first_turn() -> None:
    """Codex CLI talking to OpenAI itself (over WebSocket) sends its tools as an `additional_tools` input item
    with the developer's role: context, not an assistant turn, and its tools are the request's tools."""
    body = load("codex-websocket-0.169.0-message2.json")
    conversation = decode("openai-responses", body)
    assert [item["type"] for item in body["input"]][:2] == ["additional_tools", "message"]
    assert [m.role for m in conversation.messages] == [Role.DEVELOPER] * 5 + [Role.USER] * 2
    assert conversation.assistant_turns == 0
    assert CHAT_CODECS["openai-responses"].assistant_turns(body) == 0
    assert conversation.messages[-1].text == "Run `echo llmproxy-ok`, then tell me what it printed."
    assert {"exec", "wait", "spawn_agent"} <= {t.name for t in conversation.tools}


def test_codex_websocket_tool_result_carries_only_the_new_item() -> None:
    """On one WebSocket, Codex sends only what is new since the response it names (`previous_response_id`)."""
    body = load("codex-websocket-0.169.0-message3.json")
    assert body["previous_response_id"].startswith("resp_")
    conversation = decode("openai-responses", body)
    (message,) = conversation.messages
    assert message.role is Role.TOOL
    assert "llmproxy-ok" in message.tool_results[0].text


SHELL_NOTE = "Print a marker"


def test_gemini_cli_first_turn() -> None:
    body = load("gemini-0.61.0-turn1.json")
    conversation = decode("gemini-code-assist", body)
    assert conversation.model == body["model"]  # Code Assist names the model in its envelope, not the URL
    assert conversation.reasoning_requested is True  # thinkingConfig: includeThoughts, thinkingLevel
    assert conversation.system_text == body["request"]["systemInstruction"]["parts"][0]["text"]
    (message,) = conversation.messages
    assert message.role is Role.USER
    assert message.parts[0].text.startswith("<session_context>")  # type: ignore[union-attr]
    assert message.parts[-1] == TextPart("Run `echo llmproxy-ok` with the shell tool, then tell me what it printed.")
    shell = next(t for t in conversation.tools if t.name == "run_shell_command")
    assert shell.parameters is not None  # sent as parametersJsonSchema
    assert "command" in shell.parameters["properties"]


def test_gemini_cli_tool_result_turn() -> None:
    conversation = decode("gemini-code-assist", load("gemini-0.61.0-turn2.json"))
    assert [m.role for m in conversation.messages] == [Role.USER, Role.ASSISTANT, Role.USER]
    assistant = conversation.messages[1]
    # The CLI stamps a placeholder signature on a call that came without one.
    assert assistant.parts == (
        TextPart("Running it."),
        ReasoningPart(signature="skip_thought_signature_validator"),
        ToolCall(
            "call_capture_1", "run_shell_command", {"command": "echo llmproxy-ok", "description": "Print a marker"}
        ),
    )
    latest = conversation.latest
    assert latest is not None
    (result,) = latest.tool_results
    assert (result.tool_call_id, result.name, result.is_error) == ("call_capture_1", "run_shell_command", False)
    assert "Output: llmproxy-ok" in result.text  # {"output": text} reads as the text


def test_opencode_first_turn() -> None:
    body = load("opencode-1.18.33-turn1.json")
    conversation = decode("anthropic-messages", body)
    assert (conversation.model, conversation.stream) == ("claude-sonnet-4-5", True)
    assert "<env>" in conversation.system_text  # where it runs: folder, git, platform, date
    (message,) = conversation.messages
    # opencode quotes the prompt of `opencode run`
    assert message.text == '"Run `echo llmproxy-ok` with the bash tool, then tell me what it printed."'
    assert {"bash", "edit", "read"} <= {t.name for t in conversation.tools}


def test_opencode_tool_result_turn() -> None:
    conversation = decode("anthropic-messages", load("opencode-1.18.33-turn2.json"))
    assert conversation.assistant_turns == 1
    calls = [(call.id, call.name, call.arguments) for m in conversation.messages for call in m.tool_calls]
    assert calls == [("call_capture_1", "bash", {"command": "echo llmproxy-ok", "description": "Print a marker"})]
    latest = conversation.latest
    assert latest is not None
    (result,) = latest.tool_results
    assert (result.name, result.is_error) == ("bash", False)
    assert "llmproxy-ok" in result.text


CODECS = {
    "claude": "anthropic-messages",
    "codex": "openai-responses",
    "gemini": "gemini-code-assist",
    "opencode": "anthropic-messages",
}


@pytest.mark.parametrize("name", sorted(p.name for p in CAPTURED.glob("*.json")))
def test_every_capture_decodes(name: str) -> None:
    codec = CODECS[name.split("-")[0]]
    body = load(name)
    conversation = decode(codec, body)
    assert conversation.messages or body.get("generate") is False  # Codex's warm-up asks for nothing
