"""The neutral model's derived values."""

from llmproxy.model import (
    Conversation,
    Message,
    Role,
    TextPart,
    ToolCall,
    ToolResultPart,
    Usage,
    name_tool_results,
)


def test_usage_counts_cache_inside_input() -> None:
    usage = Usage(input_tokens=100, output_tokens=7, cache_read_tokens=60, cache_write_tokens=30)
    assert usage.uncached_input_tokens == 10
    assert usage.total_tokens == 107
    assert Usage(input_tokens=5, cache_read_tokens=9).uncached_input_tokens == 0


def test_tool_results_get_their_call_names() -> None:
    messages = (
        Message(Role.USER, (TextPart("run it"),)),
        Message(Role.ASSISTANT, (ToolCall("t1", "Bash", {"command": "ls"}), ToolCall("t2", "Read"))),
        Message(
            Role.USER,
            (
                ToolResultPart("t1", (TextPart("a.txt"),)),
                ToolResultPart("t2", (TextPart("x"),), name="Given"),
                ToolResultPart("unknown"),
            ),
        ),
    )
    named = name_tool_results(messages)
    assert [r.name for r in named[2].tool_results] == ["Bash", "Given", None]
    assert named[:2] == messages[:2]


def test_conversation_views() -> None:
    conversation = Conversation(
        model="m",
        system=(TextPart("be terse"), TextPart("be kind")),
        messages=(
            Message(Role.USER, (TextPart("hi"),)),
            Message(Role.ASSISTANT, (TextPart("hello"),)),
            Message(Role.USER, (TextPart("a"), ToolResultPart("t", (TextPart("b"),)))),
        ),
    )
    assert conversation.assistant_turns == 1
    assert conversation.latest is not None
    assert conversation.latest.text == "ab"
    assert conversation.system_text == "be terse\nbe kind"
    assert Conversation(model=None, messages=()).latest is None
