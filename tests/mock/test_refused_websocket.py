"""A WebSocket nothing may answer — to an API llmproxy does not read message by message, under mock or strict
replay — is not a refused handshake, which some CLIs showed as a bare "500" and retried: it is accepted, told why
in the error event LLM APIs send on a WebSocket, with llmproxy's diagnostic, and closed as a policy violation
(1008). Through the proxy (its CA trusted) and at the base URL alike."""

import json
import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from llmproxy.session import Listening, Session, mocking
from tests.openai_websocket import OPEN_TIMEOUT


@pytest.fixture(scope="module")
def mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    directory = tmp_path_factory.mktemp("refused-websocket")
    expectations = directory / "e.json"
    expectations.write_text(json.dumps({"expectations": [{"respond": {"text": "hi"}}]}))
    with mocking(expectations, listening=Listening(ca_directory=directory / "ca")) as proxy:
        yield proxy


def told(url: str, **options: Any) -> tuple[dict[str, Any], int | None, str]:
    """What a WebSocket client is told: the one message, then the close code and reason."""
    with connect(url, open_timeout=OPEN_TIMEOUT, **options) as socket:
        event = json.loads(socket.recv(timeout=30))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=30)
    close = closed.value.rcvd
    return event, close.code if close else None, close.reason if close else ""


@pytest.mark.parametrize("door", ["proxy", "base URL"])
def test_a_refused_websocket_is_told_why_in_an_error_event_then_closed(mock: Session, door: str) -> None:
    if door == "proxy":
        assert mock.ca_cert is not None
        trust = ssl.create_default_context(cafile=str(mock.ca_cert))
        event, code, reason = told("wss://realtime.vendor.example/v1/chat", proxy=mock.url, ssl=trust)
    else:
        event, code, reason = told(mock.base_url.replace("http://", "ws://") + "/v1/chat")
    assert event["type"] == "error"
    assert event["status"] == 404  # no LLM API llmproxy reads: its plain "not found", marked not to be retried
    assert "no expectation matched" in event["error"]["message"]  # llmproxy's diagnostic
    assert "/v1/chat" in event["error"]["message"]
    assert code == 1008
    assert reason == event["error"]["message"].splitlines()[0][:123]
    log = mock.mock_log
    assert log is not None
    assert log.misses[-1]["path"] == "/v1/chat"  # counted: the run fails, as for any miss
