"""`llmproxy.control.client.Client` against a real running mock, the official OpenAI SDK sending the traffic:
each call answers with the API's models, and each refusal is a `ControlError` with the API's own line."""

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmproxy.control.client import Client, ControlError
from llmproxy.plan import mock_plan
from llmproxy.session import Listening, Session, running
from tests.mock.sdk_clients import openai_client


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Session]:
    plan = mock_plan(None)  # no expectations: the client adds them
    with running(Session.of(plan), Listening(ca_directory=tmp_path / "ca")) as session:
        yield session


def test_add_an_expectation_then_read_what_the_sdk_sent(proxy: Session) -> None:
    control = Client.from_environment(proxy.environment)
    assert control.status().mode == "mock"
    assert control.add_expectations({"expectations": [{"respond": {"text": "Hello."}, "times": 1}]}) == [1]
    with openai_client(proxy) as client:
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
    assert answer.choices[0].message.content == "Hello."
    [standing] = control.expectations().expectations
    assert (standing.id, standing.served, standing.remaining) == (1, 1, 0)
    page = control.journal(source="mocked", test_id=None, limit=5)
    assert [(entry.seq, entry.model) for entry in page.entries] == [(1, "gpt-4o-mini")]
    assert control.entry(1).exchange.response is not None
    control.remove_expectation(1)
    assert control.clear_expectations() == 0
    assert control.clear_journal() == 1


def test_a_refusal_is_a_control_error_with_the_apis_line(proxy: Session) -> None:
    control = Client.from_environment(proxy.environment)
    with pytest.raises(ControlError, match=r"^no expectation 7: GET /llmproxy/api/v1/expectations lists them$") as e:
        control.remove_expectation(7)
    assert e.value.status == 404
    with pytest.raises(ControlError, match=r"^\$\.expectations\[0\]\.respond\.txt: Extra inputs") as e:
        control.add_expectations({"expectations": [{"respond": {"txt": "Hi"}}]})
    assert e.value.status == 400
    with pytest.raises(ControlError, match="bearer token") as e:
        Client(proxy.control_url, "not-the-token").status()
    assert e.value.status == 401


def test_no_control_api_is_one_line() -> None:
    with pytest.raises(ControlError, match="LLMPROXY_CONTROL_URL and LLMPROXY_CONTROL_TOKEN are not set"):
        Client.from_environment({})
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    with pytest.raises(ControlError, match=rf"^cannot reach the control API at http://127\.0\.0\.1:{port}/") as e:
        Client(f"http://127.0.0.1:{port}", "token").status()
    assert e.value.status == 0
