"""Count-token requests through the official SDKs against `llmproxy mock`: no expectation answers them, so
the mock answers each with llmproxy's estimate of the prompt, in the provider's own shape, marked as an
estimate; an expectation that does answer one (a scripted error) still wins."""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from llmproxy.mock.token_count import ESTIMATED_HEADER, SOURCE
from llmproxy.mock.usage import tokens
from llmproxy.session import Session
from tests.mock.sdk_clients import anthropic_client, bedrock_client, openai_client, serving, trusting

PROMPT = "Count the tokens of this sentence, please, as the provider would."
EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {"match": {"path": "/v1/messages/count_tokens", "latestMessageContains": "refuse"}, "error": {"status": 429}},
    ]
}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


def estimate(prompt: str = PROMPT) -> int:
    """What the mock estimates for one user message: its text, and the framing of a message."""
    return tokens(prompt) + 4


def last_entry(proxy: Session) -> dict[str, Any]:
    assert proxy.mock_log is not None
    entry: dict[str, Any] = proxy.mock_log.entries[-1]
    return entry


def test_anthropic_count_tokens(proxy: Session) -> None:
    with anthropic_client(proxy) as claude:
        raw = claude.messages.with_raw_response.count_tokens(
            model="claude-haiku-4-5", messages=[{"role": "user", "content": PROMPT}]
        )
        assert raw.parse().input_tokens == estimate()
        assert raw.headers[ESTIMATED_HEADER] == "token-count"
        assert last_entry(proxy)["answeredBy"] == SOURCE
        anthropic = pytest.importorskip("anthropic")
        with pytest.raises(anthropic.RateLimitError):  # an expectation for the route comes first
            claude.messages.count_tokens(model="claude-haiku-4-5", messages=[{"role": "user", "content": "refuse"}])


def test_openai_input_tokens(proxy: Session) -> None:
    with openai_client(proxy) as client:
        raw = client.responses.input_tokens.with_raw_response.count(model="gpt-5", input=PROMPT)
        counted = raw.parse()
    assert counted.input_tokens == estimate()
    assert counted.object == "response.input_tokens"
    assert raw.headers[ESTIMATED_HEADER] == "token-count"


def test_gemini_count_tokens(proxy: Session) -> None:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    options = types.HttpOptions(client_args={"proxy": proxy.url, "verify": trusting(proxy)})
    client = genai.Client(api_key="gemini-test", http_options=options)
    try:
        counted = client.models.count_tokens(model="gemini-2.5-flash", contents=PROMPT)
    finally:
        client.close()
    assert counted.total_tokens == estimate()
    assert last_entry(proxy)["answeredBy"] == SOURCE


def test_bedrock_count_tokens_converse_and_invoke(proxy: Session) -> None:
    model = "anthropic.claude-haiku-4-5-20251001-v1:0"
    converse = {"messages": [{"role": "user", "content": [{"text": PROMPT}]}]}
    invoke = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": PROMPT}],
    }
    with bedrock_client(proxy) as client:
        by_converse = client.count_tokens(modelId=model, input={"converse": converse})
        by_invoke = client.count_tokens(modelId=model, input={"invokeModel": {"body": json.dumps(invoke).encode()}})
    assert by_converse["inputTokens"] == estimate()
    assert by_invoke["inputTokens"] == estimate()
    assert by_converse["ResponseMetadata"]["HTTPHeaders"][ESTIMATED_HEADER] == "token-count"


def test_a_body_that_is_not_a_count_is_not_answered(proxy: Session) -> None:
    """Bedrock's invokeModel body must be base64: anything else is a miss, never a made-up count."""
    import httpx

    with httpx.Client(proxy=proxy.url, verify=trusting(proxy)) as http:
        reply = http.post(
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-haiku-4-5/count-tokens",
            json={"input": {"invokeModel": {"body": "not base64!"}}},
        )
    assert reply.status_code != 200
    assert ESTIMATED_HEADER not in reply.headers
    assert "no expectation" in last_entry(proxy)["miss"]
