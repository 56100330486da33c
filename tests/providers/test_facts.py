"""Per-provider facts, declared beside each provider's codecs and reached through the registry: what replay
leaves out of matching, where history is shared, how input tokens are counted."""

import pytest

from llmproxy.cassette import jsonpath
from llmproxy.cassette.history import history
from llmproxy.cassette.matching import volatile_fields
from llmproxy.mock import spec
from llmproxy.mock.usage import declared_usage
from llmproxy.model import Provider
from llmproxy.providers.registry import facts, history_paths
from llmproxy.providers.routes import detect
from tests.samples import CHAT, Sample


@pytest.mark.parametrize("sample", CHAT, ids=lambda sample: sample.name)
def test_every_chat_api_names_where_its_requests_carry_the_history(sample: Sample) -> None:
    route = detect(sample.host, sample.path, {}, method="POST")
    assert route is not None
    declared = facts(route.provider).history
    found = history(sample.body)
    if found is None:  # a prompt, not a conversation (Ollama's generate, Responses' string input)
        assert isinstance(sample.body.get("prompt", sample.body.get("input")), str)
        return
    assert found[0] in declared


def test_history_paths_are_every_providers_once_in_declaration_order() -> None:
    assert history_paths() == (("messages",), ("input",), ("contents",), ("request", "contents"))


def test_a_provider_with_two_apis_has_the_facts_of_both() -> None:
    openai = facts(Provider.OPENAI)
    assert openai.history == (("messages",), ("input",))
    assert facts("azure").volatile == openai.volatile == ("$.user", "$.prompt_cache_key", "$.safety_identifier")


def test_volatile_fields_reach_matching_parsed() -> None:
    assert volatile_fields("anthropic") == (jsonpath.parse("$.metadata.user_id"),)
    assert volatile_fields("gemini_code_assist") == tuple(
        map(jsonpath.parse, ("$.user_prompt_id", "$.request.session_id"))
    )
    assert volatile_fields(None) == volatile_fields("not-a-provider") == ()


@pytest.mark.parametrize(
    ("provider", "excludes"),
    [(Provider.ANTHROPIC, True), (Provider.BEDROCK, True), (Provider.OPENAI, False), (Provider.GEMINI, False)],
)
def test_input_counts_that_leave_out_the_cache_are_added_back(provider: Provider, excludes: bool) -> None:
    assert facts(provider).input_excludes_cache is excludes
    usage = declared_usage(spec.Usage(inputTokens=10, cachedInputTokens=100, cacheCreationTokens=5), provider)
    assert usage.input_tokens == (115 if excludes else 10)
