"""Hypothesis strategies for Completions, shared by the Responses codec's property tests."""

from hypothesis import strategies as st

from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage

texts = st.text(st.characters(min_codepoint=1, max_codepoint=0xD7FF) | st.characters(min_codepoint=0xE000), max_size=60)
json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
counts = st.integers(0, 10**6)

tool_calls = st.builds(
    ToolCall,
    id=texts,
    name=texts,
    arguments=st.dictionaries(texts, json_values, max_size=3),
    invalid_arguments=st.none() | texts,
)
usages = st.builds(
    Usage,
    input_tokens=counts,
    output_tokens=counts,
    cache_read_tokens=counts,
    cache_write_tokens=counts,
    reasoning_tokens=counts,
    estimated=st.booleans(),
)
errors = st.builds(ProviderError, kind=st.sampled_from(ErrorKind), message=texts, type=st.none() | texts)

completions = st.builds(
    Completion,
    id=st.none() | texts,
    model=st.none() | texts,
    created=st.none() | st.integers(0, 2**40),
    text=texts,
    tool_calls=st.lists(tool_calls, max_size=3).map(tuple),
    stop_reason=st.none() | st.sampled_from(StopReason),
    reasoning=st.none() | texts,
    reasoning_signature=st.none() | texts,
    usage=st.none() | usages,
    error=st.none() | errors,
)
