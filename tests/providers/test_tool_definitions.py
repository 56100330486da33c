"""Tool definitions are decoded once per distinct list: an agent re-sends the same tools every turn."""

import orjson
import pytest

from llmproxy.errors import ParseError
from llmproxy.providers.anthropic.request import decode_request as anthropic_request
from llmproxy.providers.cohere_chat.request import decode_request as cohere_request
from llmproxy.providers.node import Parsed

TOOLS = [{"name": "read_file", "description": "read a file", "input_schema": {"type": "object"}}]


def _anthropic(tools: object) -> bytes:
    return orjson.dumps(
        {"model": "m", "max_tokens": 5, "tools": tools, "messages": [{"role": "user", "content": "hi"}]}
    )


def test_a_resent_tools_list_decodes_to_the_same_definitions() -> None:
    first = anthropic_request(_anthropic(TOOLS))
    again = anthropic_request(Parsed(orjson.loads(_anthropic(TOOLS))))
    assert again.tools is first.tools
    assert first.tools[0].name == "read_file"
    assert first.tools[0].parameters == {"type": "object"}


def test_a_changed_tools_list_decodes_afresh() -> None:
    first = anthropic_request(_anthropic(TOOLS))
    changed = anthropic_request(_anthropic([{**TOOLS[0], "description": "read it"}]))
    assert changed.tools is not first.tools
    assert changed.tools[0].description == "read it"
    assert anthropic_request(_anthropic(None)).tools == ()


def test_a_bad_tools_list_fails_every_time() -> None:
    bad = _anthropic([{"description": "no name"}])
    for _ in range(2):
        with pytest.raises(ParseError, match=r"\$\.tools\[0\]\.name"):
            anthropic_request(bad)


def test_codecs_keep_their_own_readings_of_the_same_text() -> None:
    """The same JSON text means different tools to different APIs: Cohere's tools are OpenAI-shaped."""
    tools = [{"type": "function", "function": {"name": "run", "parameters": {"type": "object"}}}]
    body = {"model": "command-a", "messages": [{"role": "user", "content": "hi"}], "tools": tools}
    cohere = cohere_request(orjson.dumps(body))
    assert cohere.tools[0].name == "run"
    with pytest.raises(ParseError):
        anthropic_request(_anthropic(tools))
