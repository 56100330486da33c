"""A usage object is read once for each distinct value (`providers.usage_read`): reading the same value again
gives what the first reading gave, a different value is read afresh, and a value the API's reading rejects is
rejected every time, never kept as read."""

import pytest

from llmproxy.errors import ParseError
from llmproxy.model import Usage
from llmproxy.providers.gemini.wire import decode_usage as gemini_usage
from llmproxy.providers.node import Node
from llmproxy.providers.openai_chat.mapping import decode_usage as chat_usage
from llmproxy.providers.openai_responses.common import decode_usage as responses_usage
from llmproxy.providers.usage_read import KEPT, remembered

CHAT = {
    "prompt_tokens": 260,
    "completion_tokens": 20,
    "total_tokens": 280,
    "prompt_tokens_details": {"cached_tokens": 6},
}


def test_the_same_usage_is_read_once_and_gives_the_same_counts() -> None:
    read: list[object] = []

    def counted(node: Node) -> Usage | None:
        read.append(node.value)
        return chat_usage.__wrapped__(node)  # type: ignore[attr-defined]

    decode = remembered(counted)
    first = decode(Node(dict(CHAT), "chat"))
    again = decode(Node(dict(CHAT), "chat"))  # an equal object, parsed from another answer
    other = decode(Node({**CHAT, "completion_tokens": 21}, "chat"))
    assert first == again == Usage(input_tokens=260, output_tokens=20, cache_read_tokens=6)
    assert other == Usage(input_tokens=260, output_tokens=21, cache_read_tokens=6)
    assert len(read) == 2  # the equal object was not read again


def test_what_each_api_reads_is_what_it_read_before_remembering() -> None:
    for decode, value in (
        (chat_usage, CHAT),
        (responses_usage, {"input_tokens": 9, "output_tokens": 4, "total_tokens": 13}),
        (gemini_usage, {"promptTokenCount": 9, "candidatesTokenCount": 4, "thoughtsTokenCount": 2}),
    ):
        for _ in range(2):
            assert decode(Node(value, "api")) == decode.__wrapped__(Node(value, "api"))  # type: ignore[attr-defined]


def test_a_usage_the_api_rejects_is_rejected_each_time() -> None:
    for _ in range(2):
        with pytest.raises(ParseError, match=r"\$\.usage\.prompt_tokens"):
            chat_usage(Node({"prompt_tokens": "many"}, "openai chat response", "$.usage"))


def test_a_usage_orjson_cannot_write_is_read_each_time() -> None:
    for _ in range(2):
        assert chat_usage(Node({"prompt_tokens": 2**70}, "chat")) == Usage(input_tokens=2**70)


def test_absent_and_null_usage_read_as_none() -> None:
    assert chat_usage(Node(None, "chat")) is None


def test_more_usages_than_are_kept_are_each_read_right() -> None:
    decode = remembered(chat_usage.__wrapped__)  # type: ignore[attr-defined]
    for _ in range(2):
        for count in range(KEPT + 5):
            assert decode(Node({"prompt_tokens": count}, "chat")) == Usage(input_tokens=count)
