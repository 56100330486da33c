"""The Completions every chat codec's golden files are made from (see scripts/regen_golden.py)."""

from llmproxy.cassette.stream_capture import Framing, framing
from llmproxy.framing import eventstream
from llmproxy.model import Completion, StopReason, ToolCall, Usage
from llmproxy.providers.base import ChatCodec


def stream_suffix(codec: ChatCodec) -> str:
    """The golden stream file's extension, after the codec's framing: `.sse`, `.ndjson`, or `.eventstream`
    for AWS event-stream (binary)."""
    lines = framing(codec.stream_media_type) is Framing.LINES
    return ".ndjson" if lines else {eventstream.MEDIA_TYPE: ".eventstream"}.get(codec.stream_media_type, ".sse")


CASES: dict[str, Completion] = {
    "text": Completion(
        id="gold_text_1",
        model="golden-model",
        created=1_767_225_600,
        text="Hello! How can I help you today?",
        stop_reason=StopReason.END_TURN,
        usage=Usage(input_tokens=12, output_tokens=9),
    ),
    "tool_call": Completion(
        id="gold_tool_1",
        model="golden-model",
        created=1_767_225_600,
        text="",
        tool_calls=(ToolCall(id="call_gold_1", name="get_weather", arguments={"city": "Paris", "unit": "c"}),),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input_tokens=40, output_tokens=18),
    ),
    "parallel_tools": Completion(
        id="gold_par_1",
        model="golden-model",
        created=1_767_225_600,
        text="Checking both cities.",
        tool_calls=(
            ToolCall(id="call_gold_a", name="get_weather", arguments={"city": "Paris"}),
            ToolCall(id="call_gold_b", name="get_weather", arguments={"city": "Tōkyō", "days": [1, 2]}),
        ),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input_tokens=55, output_tokens=31),
    ),
    "reasoning": Completion(
        id="gold_reason_1",
        model="golden-model",
        created=1_767_225_600,
        text="The answer is 42.",
        reasoning="The user wants the answer. Six times seven is forty-two.",
        reasoning_signature="c2lnbmF0dXJlLWdvbGRlbg==",
        stop_reason=StopReason.END_TURN,
        usage=Usage(input_tokens=20, output_tokens=60, reasoning_tokens=35),
    ),
    "cached_usage": Completion(
        id="gold_cache_1",
        model="golden-model",
        created=1_767_225_600,
        text="Using the cached context: yes.",
        stop_reason=StopReason.END_TURN,
        usage=Usage(input_tokens=2048, output_tokens=7, cache_read_tokens=1536, cache_write_tokens=256),
    ),
    "max_tokens": Completion(
        id="gold_max_1",
        model="golden-model",
        created=1_767_225_600,
        text="This answer was cut off in the mid",
        stop_reason=StopReason.MAX_TOKENS,
        usage=Usage(input_tokens=8, output_tokens=10),
    ),
    "unicode_multiline": Completion(
        id="gold_uni_1",
        model="golden-model",
        created=1_767_225_600,
        text="Zeile 1: “quoted” — ünïcödé ✓\n\nLine 3 with emoji 🚀 and\ttab\r\nand CRLF.",
        stop_reason=StopReason.END_TURN,
        usage=Usage(input_tokens=5, output_tokens=25),
    ),
    "invalid_arguments": Completion(
        id="gold_bad_1",
        model="golden-model",
        created=1_767_225_600,
        tool_calls=(ToolCall(id="call_gold_bad", name="write_file", invalid_arguments='{"path": "a.txt", "con'),),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input_tokens=30, output_tokens=12),
    ),
}
