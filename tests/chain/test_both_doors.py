"""Every door calls the same chain: the same request gets byte-identical answers through the proxy (HTTPS_PROXY
style) — the lean door, and mitmproxy where a session needs it — and on the loopback relay (a client set by base
URL), mocked and replayed, for every provider.

The request is the same on every door: it goes to the relay's address with the provider's host in its Host
header, so through a proxy it is intercepted and answered there, and on the relay it is answered directly.
What the mock answers is then recorded into a cassette, its streams given timing, and replayed the same way:
a paced stream goes out from the relay, from the lean door, and from the relay behind mitmproxy.
"""

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx2 as httpx
import pytest

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.cassette.stream_capture import StreamCapture
from llmproxy.model.exchange import RawEvent, RawExchange, RawResponse
from llmproxy.plan import mock_plan, replay_plan
from llmproxy.session import Listening, Session, running
from llmproxy_addons.proxy import free_port
from tests.cassette import factory
from tests.samples import ALL, Sample

FRAMING = {"content-length", "transfer-encoding", "connection", "date", "server"}
EXPECTATIONS = {
    "expectations": [
        {"match": {"path": "^.*(embed|embedContent|embeddings)$"}, "embedding": {"dimensions": 8}},
        {"match": {"path": "^.*rerank$"}, "rerank": {}},
        {"respond": {"text": "Hi there, from either door.", "usage": {"inputTokens": 9, "outputTokens": 6}}},
    ]
}


def answer(client: httpx.Client, port: int, sample: Sample) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (framing aside) and body of `sample` sent to the relay's address as `sample.host`."""
    headers = {"host": sample.host, "content-type": "application/json"}
    response = client.post(f"http://127.0.0.1:{port}{sample.path}", content=sample.data, headers=headers)
    kept = {name: value for name, value in response.headers.items() if name.lower() not in FRAMING}
    return response.status_code, kept, response.content


def every_door(lean: Session, mitmproxy: Session, sample: Sample) -> tuple[int, dict[str, str], bytes]:
    """`sample`'s answer through the lean door, through mitmproxy (a session of its own, serving the same), and on
    the lean session's relay: the same from all three."""
    assert [listener.spec for listener in lean.listeners] == ["lean"]
    assert [listener.spec for listener in mitmproxy.listeners] != ["lean"]
    port = int(lean.base_url.rsplit(":", 1)[1])
    with (
        httpx.Client(proxy=lean.url, timeout=30) as through_lean,
        httpx.Client(proxy=mitmproxy.url, timeout=30) as through_mitmproxy,
        httpx.Client(timeout=30) as direct,
    ):
        on_lean_door = answer(through_lean, port, sample)
        on_mitmproxy = answer(through_mitmproxy, port, sample)
        on_relay = answer(direct, port, sample)
    assert on_lean_door == on_relay
    assert on_mitmproxy == on_relay
    return on_relay


def on_mitmproxy(listening: Listening) -> Listening:
    return replace(listening, lean_door=False)


@pytest.fixture(scope="module")
def mocked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[int, dict[str, str], bytes]]]:
    """Every sample's mocked answer, checked equal on both doors."""
    directory = tmp_path_factory.mktemp("doors")
    expectations = directory / "expectations.json"
    expectations.write_text(json.dumps(EXPECTATIONS))
    listening = Listening(ca_directory=directory / "ca")
    with (
        running(Session.of(mock_plan(expectations)), listening) as lean,
        running(Session.of(mock_plan(expectations)), on_mitmproxy(listening)) as mitmproxy,
    ):
        yield {sample.name: every_door(lean, mitmproxy, sample) for sample in ALL}
    assert lean.mock_log is not None
    assert lean.mock_log.count == 2 * len(ALL)
    assert mitmproxy.mock_log is not None
    assert mitmproxy.mock_log.count == len(ALL)


@pytest.mark.parametrize("sample", ALL, ids=lambda sample: sample.name)
def test_mocked_answers_are_the_same_through_every_door(
    mocked: dict[str, tuple[int, dict[str, str], bytes]], sample: Sample
) -> None:
    status, headers, body = mocked[sample.name]
    assert status == 200, body
    assert headers["content-type"] in (
        "application/json",
        "text/event-stream",
        "application/x-ndjson",
        "application/vnd.amazon.eventstream",
    )
    assert body


def record(path: Path, port: int, answers: dict[str, tuple[int, dict[str, str], bytes]]) -> None:
    """The mocked answers as recordings of the samples sent to `port`, each three times (every door asks): streams
    cut into their wire events, 20 ms apart."""
    writer = CassetteWriter.open(path, Redactor())
    for sample in ALL:
        status, headers, body = answers[sample.name]
        request_headers = (("host", sample.host), ("content-type", "application/json"))
        request = factory.request(
            sample.data, scheme="http", host=sample.host, port=port, path=sample.path, headers=request_headers
        )
        events = None
        content_type = headers.get("content-type", "")
        if StreamCapture.streams(content_type):
            capture = StreamCapture(content_type, None, 0.0)
            capture.feed(body, 0.0)
            events = tuple(RawEvent(20.0 * i, event.data) for i, event in enumerate(capture.finish(0.0)))
        response = RawResponse(status, "OK", "HTTP/1.1", tuple(headers.items()), None if events else body, events, None)
        for _ in range(3):
            writer.add(RawExchange(request, response, None, datetime.now(UTC), 1.0, 2.0))
    writer.close()


def test_replayed_answers_are_the_same_through_every_door(
    tmp_path: Path, mocked: dict[str, tuple[int, dict[str, str], bytes]]
) -> None:
    port = free_port()
    cassette = tmp_path / "doors.json"
    record(cassette, port, mocked)
    plan = replace(replay_plan([cassette]), base_url=True, base_url_port=port)
    listening = Listening(ca_directory=tmp_path / "ca")
    with (
        running(Session.of(plan), listening) as lean,
        running(Session.of(replace(plan, base_url_port=0)), on_mitmproxy(listening)) as mitmproxy,
    ):
        assert lean.base_url == f"http://127.0.0.1:{port}"
        replayed = {sample.name: every_door(lean, mitmproxy, sample) for sample in ALL}
    for session in (lean, mitmproxy):
        assert session.misses == []
        assert "replayed 0 requests" not in session.summary
    for sample in ALL:
        assert replayed[sample.name] == mocked[sample.name], sample.name
