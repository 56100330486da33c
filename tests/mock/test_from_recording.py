"""A recording turned into expectations (`cassette to-expectations`) and served by `llmproxy mock` answers the
recorded requests as `llmproxy replay` does: the same text, tool calls, reasoning, stop reasons and usage."""

import ssl
from pathlib import Path

import httpx2 as httpx
import pytest

from llmproxy.cassette.bodies import body_bytes
from llmproxy.cassette.model import Exchange, header_pairs
from llmproxy.cassette.store import load_cassette
from llmproxy.mock.from_cassette import dumps, to_expectations
from llmproxy.model import Completion
from llmproxy.providers.registry import chat_codec
from llmproxy.providers.routes import detect, with_body
from llmproxy.session import Listening, Session, mocking, replaying

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = [ROOT / "cassettes" / "claude-code-tool-loop.json", ROOT / "cassettes" / "quickstart.json"]
_SENT_HEADERS = {"content-type", "anthropic-version", "anthropic-beta", "user-agent", "x-app"}


def ask(proxy: Session, exchange: Exchange) -> Completion:
    """Send the recorded request through the proxy; the answer as its API's codec reads it."""
    request = exchange.request
    assert request.body is not None
    body = body_bytes(request.body)
    headers = {name: value for name, value in header_pairs(request.headers) if name.lower() in _SENT_HEADERS}
    trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
    with httpx.Client(proxy=proxy.url, verify=trust, timeout=30) as client:
        response = client.post(request.url, content=body, headers=headers)
    assert response.status_code == 200, response.text
    route = detect(httpx.URL(request.url).host, httpx.URL(request.url).raw_path.decode(), headers)
    assert route is not None
    route = with_body(route, httpx.Response(200, content=body).json())
    codec = chat_codec(route)
    assert codec is not None
    return codec.decode_stream([response.content]) if route.streaming else codec.decode_response(response.content)


def essentials(completion: Completion) -> tuple[object, ...]:
    usage = completion.usage
    tokens = (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) if usage else None
    return (completion.text, completion.tool_calls, completion.stop_reason, completion.reasoning, tokens)


@pytest.mark.parametrize("cassette", CASSETTES, ids=lambda path: path.stem)
def test_mock_from_a_recording_answers_as_replay_does(cassette: Path, tmp_path: Path) -> None:
    recorded = load_cassette(cassette)
    chats = [
        e for e in recorded.exchanges if e.response is not None and e.response.status == 200 and e.streaming is not None
    ]
    chats = [e for e in chats if e.operation in ("messages", "chat_completions", "responses")]
    assert chats, "the example cassette has chat exchanges"
    expectations = tmp_path / "expectations.json"
    expectations.write_bytes(dumps(to_expectations(recorded)))
    listening = Listening(ca_directory=tmp_path / "ca")

    with replaying(cassette, listening=listening, timing=None) as proxy:
        replayed = [essentials(ask(proxy, exchange)) for exchange in chats]
    with mocking(expectations, listening) as proxy:
        mocked = [essentials(ask(proxy, exchange)) for exchange in chats]
    assert mocked == replayed
    assert any(text for text, *_ in replayed)
