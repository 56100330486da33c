"""Chaos on the Responses API over a WebSocket (Codex CLI's connection), mocked, on both doors: an injected
error is the error message the API sends on the socket, and a cut answer stops short and drops the
connection."""

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets

from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import ChaosFile, Rule, RuleMatch
from llmproxy.intercept.settings import InterceptPlan
from llmproxy.session import Listening, Session, mocking
from tests.openai_websocket import ENDS, answer, at_base_url, through_proxy

RULES = (
    Rule(match=RuleMatch(model="flaky"), chaos=ChaosProfile(errorStatus=429, retryAfter="1", failRequestCount=1)),
    Rule(match=RuleMatch(model="cut"), chaos=ChaosProfile(truncateAfterEvents=2)),
)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    directory = tmp_path_factory.mktemp("websocket-chaos")
    path = directory / "expectations.json"
    path.write_text(json.dumps({"expectations": [{"respond": {"text": "hello there"}}]}))
    plan = InterceptPlan(ChaosFile(seed=1, rules=RULES))
    with mocking(path, Listening(ca_directory=directory / "ca"), intercept=plan) as session:
        yield session


def connection(proxy: Session, door: str) -> Any:
    if door == "base URL":
        return at_base_url(proxy.base_url)
    return through_proxy(proxy.url, Path(proxy.environment["SSL_CERT_FILE"]))


def test_an_injected_error_is_the_apis_error_message_then_the_answer(proxy: Session) -> None:
    with connection(proxy, "base URL") as socket:
        (error,) = answer(socket, model="flaky", input="hello")
        again = answer(socket, model="flaky", input="hello")
    assert (error.type, error.status) == ("error", 429)
    assert error.model_dump()["headers"]["retry-after"] == "1"
    assert again[-1].response.output_text == "hello there"


@pytest.mark.parametrize("door", ["proxy", "base URL"])
def test_a_cut_answer_drops_the_connection_after_two_messages(proxy: Session, door: str) -> None:
    received = []
    with contextlib.suppress(websockets.exceptions.ConnectionClosedError), connection(proxy, door) as socket:
        socket.response.create(model="cut", input="hello")
        for event in socket:  # ends when the connection drops (or raises: no close frame)
            received.append(event.type)
    assert received == ["response.created", "response.in_progress"]
    assert not set(received) & set(ENDS)
