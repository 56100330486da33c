"""A call's sizes: estimated from the request's parts exactly as from its joined text."""

from hypothesis import given
from hypothesis import strategies as st

from llmproxy.analysis.calls import read_messages
from llmproxy.mock.usage import tokens
from llmproxy.model import Message, Role, TextPart, ToolResultPart

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
PART = st.one_of(
    TEXT.map(TextPart), st.tuples(st.text(max_size=8), TEXT).map(lambda p: ToolResultPart(p[0], (TextPart(p[1]),)))
)


@given(st.lists(st.lists(PART, max_size=5).map(lambda parts: Message(Role.USER, tuple(parts))), max_size=4))
def test_a_message_counts_the_tokens_of_its_whole_text(messages: list[Message]) -> None:
    counted, results, _ = read_messages(tuple(messages), 0)
    assert counted == sum(tokens(message.text) for message in messages)
    assert [block.tokens for block in results] == [tokens(p.text) for m in messages for p in m.tool_results]
