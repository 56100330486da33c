"""Conversation predicates and prompt normalisation (MockServer's semantics) on requests as the provider
decoders read them: one predicate serves Anthropic and OpenAI alike."""

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmproxy.mock.normalise import normalise
from llmproxy.mock.predicates import mismatches
from llmproxy.mock.spec import Match, Normalization
from llmproxy.model import Conversation
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect

ANTHROPIC = [
    {"role": "user", "content": "List   the FILES"},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt b.txt"}]},
]
OPENAI = [
    {"role": "user", "content": "List   the FILES"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "a.txt b.txt"},
]


def conversation(provider: str, messages: list[dict[str, Any]]) -> Conversation:
    host, path = {
        "anthropic": ("api.anthropic.com", "/v1/messages"),
        "openai": ("api.openai.com", "/v1/chat/completions"),
    }[provider]
    route = detect(host, path)
    assert route is not None
    codec = chat_codec(route)
    assert codec is not None
    return codec.decode_request(orjson.dumps({"model": "m", "max_tokens": 10, "messages": messages}))


@pytest.mark.parametrize(("provider", "messages"), [("anthropic", ANTHROPIC), ("openai", OPENAI)])
def test_the_same_predicates_hold_for_both_providers(provider: str, messages: list[dict[str, Any]]) -> None:
    after_tool = conversation(provider, messages)
    first = conversation(provider, messages[:1])
    holds = [
        Match(turnIndex=1),
        Match(containsToolResultFor="Bash"),
        Match(latestMessageRole="tool"),
        Match(latestMessageContains="a.txt  B.TXT", normalization=Normalization(lowercase=True)),
        Match(latestMessageMatches=r"^a\.txt b"),
    ]
    for match in holds:
        assert not mismatches(match, after_tool), match
        assert mismatches(match, first), match
    assert not mismatches(Match(turnIndex=0, latestMessageRole="user", latestMessageContains="List the FILES"), first)


def test_a_mismatch_says_which_predicate_and_what_was_found() -> None:
    first = conversation("anthropic", ANTHROPIC[:1])
    reasons = mismatches(
        Match(turnIndex=2, latestMessageContains="deploy", containsToolResultFor="Bash", latestMessageRole="tool"),
        first,
    )
    assert reasons == [
        "turnIndex: expected 2, the request has 0 completed assistant turns",
        "latestMessageContains: 'deploy' not in 'List the FILES'",
        "latestMessageRole: expected tool, got user",
        "containsToolResultFor: no result for Bash (results for: none)",
    ]


def test_contains_normalises_both_sides_matches_only_the_subject() -> None:
    first = conversation("anthropic", ANTHROPIC[:1])
    assert not mismatches(Match(latestMessageContains="List    the"), first)  # whitespace collapsed both sides
    assert mismatches(Match(latestMessageMatches="List    the"), first)  # the pattern is kept as written


def test_normalisation_defaults_and_flags() -> None:
    prompt = '{"b": 1, "a": {"id": "req_0123456789", "at": "2026-11-23T10:00:00Z"}}  '
    assert normalise(prompt, None) == '{"a":{"at":"2026-11-23T10:00:00Z","id":"req_0123456789"},"b":1}'
    dropped = normalise(prompt, Normalization(dropVolatileFields=("at",), dropBuiltInVolatileFields=True))
    assert dropped == '{"a":{"id":""},"b":1}'
    assert normalise("  Hello\n\tWORLD ", Normalization(lowercase=True)) == "hello world"
    assert normalise("  Hello\n\tWORLD ", Normalization(collapseWhitespace=False)) == "  Hello\n\tWORLD "


options = st.builds(
    Normalization,
    collapseWhitespace=st.none() | st.booleans(),
    lowercase=st.none() | st.booleans(),
    sortJsonKeys=st.none() | st.booleans(),
    dropBuiltInVolatileFields=st.none() | st.booleans(),
    dropVolatileFields=st.lists(st.sampled_from(["a", "id", "at"]), max_size=2).map(tuple),
)
texts = st.text() | st.recursive(
    st.none() | st.integers(-(2**53), 2**53) | st.text(max_size=10),
    lambda inner: st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
).map(lambda value: orjson.dumps(value).decode())


@given(texts, options)
def test_normalisation_is_idempotent(text: str, option: Normalization) -> None:
    once = normalise(text, option)
    assert normalise(once, option) == once
