"""The control API over real HTTP, on a real running mock (`llmproxy.session.mocking` on 127.0.0.1) that the
official OpenAI SDK calls through the proxy: the status, the journal of what the SDK sent (mocked, streamed,
missed), its filters and one exchange whole, redacted; and every refusal — no token, the read-only token on a
mutating endpoint, an unknown endpoint, a wrong method, a bad parameter, a body over 8 MiB."""

import dataclasses
import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest

from llmproxy import __version__
from llmproxy.environment import CONTROL_READ_ONLY_TOKEN_VARIABLE, CONTROL_TOKEN_VARIABLE
from llmproxy.plan import mock_plan
from llmproxy.session import Listening, Session, running
from tests.mock.sdk_clients import openai_client, serving

PUBLISHED = Path(__file__).resolve().parents[2] / "docs" / "control.openapi.json"
API_KEY = "sk-test"  # what openai_client sends: it must never show in the journal
EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris is the capital of France."}},
    ]
}
SEEN: dict[str, Any] = {}
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the control port is called directly


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


@pytest.fixture(scope="module")
def traffic(proxy: Session) -> Session:
    """Three requests through the proxy: one answered whole, one streamed (sent with a test id), one missed."""
    with openai_client(proxy) as client:
        ask = [{"role": "user", "content": "What is the capital of France?"}]
        SEEN["usage"] = client.chat.completions.create(model="gpt-4o-mini", messages=ask).usage
        stream = client.chat.completions.create(
            model="gpt-4o", messages=ask, stream=True, extra_headers={"x-llmproxy-test-id": "test-42"}
        )
        assert "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "unknown"}])
    return proxy


def call(
    proxy: Session, method: str, path: str, body: Any = None, token: str | None = "full"
) -> tuple[int, Any, dict[str, str]]:
    """`path` under the API's base, or a whole URL; `token` "full", "read-only", None or a token itself."""
    tokens = {"full": proxy.environment[CONTROL_TOKEN_VARIABLE]}
    tokens["read-only"] = proxy.environment[CONTROL_READ_ONLY_TOKEN_VARIABLE]
    data = json.dumps(body).encode() if body is not None else None
    url = path if path.startswith("http://") else proxy.control_api_url + path
    request = urllib.request.Request(url, data=data, method=method)
    if token is not None:
        request.add_header("authorization", f"Bearer {tokens.get(token, token)}")
    try:
        with DIRECT.open(request, timeout=10) as response:
            return response.status, json.load(response), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error), dict(error.headers)


def test_status_names_the_run_its_listeners_and_counts(traffic: Session) -> None:
    status, answer, _ = call(traffic, "GET", "/status")
    assert status == 200
    assert answer["version"] == __version__
    assert answer["mode"] == "mock"
    assert answer["proxyUrl"] == traffic.url
    assert answer["listeners"][0]["url"] == traffic.url
    assert answer["journal"]["bySource"] == {"mocked": 2, "missed": 1}
    assert answer["refused"] == 1


def test_the_journal_lists_what_the_sdk_sent_newest_last(traffic: Session) -> None:
    status, page, _ = call(traffic, "GET", "/journal")
    assert status == 200
    entries = page["entries"]
    assert [(e["seq"], e["source"], e["model"], e["status"]) for e in entries] == [
        (1, "mocked", "gpt-4o-mini", 200),
        (2, "mocked", "gpt-4o", 200),
        (3, "missed", "gpt-4o-mini", 400),
    ]
    assert all(e["provider"] == "openai" and e["url"] == "https://api.openai.com/v1/chat/completions" for e in entries)
    assert [e["streaming"] for e in entries] == [False, True, False]
    assert entries[1]["testId"] == "test-42"
    usage = SEEN["usage"]  # what the SDK was told it used
    assert entries[0]["usage"]["inputTokens"] == usage.prompt_tokens
    assert entries[0]["usage"]["outputTokens"] == usage.completion_tokens
    assert Decimal(entries[0]["costUsd"]) > 0
    assert "usage" not in entries[1]  # a stream without stream_options.include_usage reports none
    assert "usage" not in entries[2]
    assert page["counts"] == {
        "kept": 3,
        "capacity": 1000,
        "dropped": 0,
        "last": 3,
        "bySource": {"mocked": 2, "missed": 1},
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("?model=gpt-4o", [2]),
        ("?source=missed", [3]),
        ("?testId=test-42", [2]),
        ("?provider=anthropic", []),
        ("?path=/v1/chat", [1, 2, 3]),
        ("?path=/v1/responses", []),
        ("?since=1", [2, 3]),
        ("?limit=2", [2, 3]),
        ("?model=gpt-4o-mini&limit=1", [3]),
    ],
)
def test_the_journal_filters(traffic: Session, query: str, expected: list[int]) -> None:
    status, page, _ = call(traffic, "GET", "/journal" + query)
    assert status == 200
    assert [entry["seq"] for entry in page["entries"]] == expected


def test_one_exchange_whole_is_redacted_as_a_cassette_is(traffic: Session) -> None:
    status, plain, _ = call(traffic, "GET", "/journal/1", token="read-only")
    assert status == 200
    exchange = plain["exchange"]
    assert exchange["request"]["body"]["json"]["messages"][0]["content"] == "What is the capital of France?"
    assert exchange["response"]["body"]["json"]["choices"][0]["message"]["content"] == "Paris is the capital of France."
    [(_, redacted)] = traffic.plan.redactor.headers([("authorization", f"Bearer {API_KEY}")])  # as a cassette
    assert f"authorization: {redacted}" in exchange["request"]["headers"]
    assert API_KEY not in json.dumps(plain)
    status, streamed, _ = call(traffic, "GET", "/journal/2")
    events = streamed["exchange"]["response"]["events"]
    assert streamed["testId"] == "test-42"
    assert "Paris" in "".join(
        event["data"]["choices"][0]["delta"].get("content") or ""
        for event in events
        if isinstance(event.get("data"), dict) and event["data"]["choices"]
    )
    assert API_KEY not in json.dumps(streamed)


def test_a_wrong_or_missing_token_gets_401(traffic: Session) -> None:
    for token in (None, "not-the-token"):
        status, answer, headers = call(traffic, "GET", "/status", token=token)
        assert status == 401
        assert "bearer token" in answer["error"]
        assert headers["www-authenticate"] == "Bearer"


def test_the_read_only_token_reads_but_cannot_change_the_run(traffic: Session) -> None:
    assert call(traffic, "GET", "/journal", token="read-only")[0] == 200
    status, answer, _ = call(traffic, "DELETE", "/journal", token="read-only")
    assert status == 403
    assert "read-only token" in answer["error"]
    assert call(traffic, "GET", traffic.control_url, token="read-only")[0] == 200  # reading chaos is reading
    assert call(traffic, "PUT", traffic.control_url, {"clear": True}, token="read-only")[0] == 403
    assert call(traffic, "GET", "/journal/1")[0] == 200  # nothing was cleared


def test_an_unknown_endpoint_gets_404_listing_them(traffic: Session) -> None:
    status, answer, _ = call(traffic, "GET", "/expectation")
    assert status == 404
    assert answer["error"] == "no such endpoint: /llmproxy/api/v1/expectation"
    assert "GET /llmproxy/api/v1/journal/{seq}" in answer["endpoints"]
    assert "GET /llmproxy/api/v1/openapi.json" in answer["endpoints"]
    status, answer, _ = call(traffic, "GET", "/journal/99")
    assert (status, answer["error"]) == (404, "the journal has no entry 99: it holds 1 to 3")


def test_a_wrong_method_gets_405_naming_the_allowed(traffic: Session) -> None:
    status, answer, headers = call(traffic, "POST", "/status", {})
    assert status == 405
    assert answer["allowed"] == ["GET"]
    assert headers["allow"] == "GET"


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/journal?limit=0", "query parameter limit: Input should be greater than or equal to 1"),
        ("/journal?limit=many", "query parameter limit: Input should be a valid integer"),
        ("/journal?source=cached", "query parameter source: Input should be 'live', 'replayed'"),
        ("/journal?colour=red", "query parameter colour: Extra inputs are not permitted"),
        ("/journal/first", "path parameter seq: Input should be a valid integer"),
        ("/status?verbose=1", "unknown query parameter: verbose"),
    ],
)
def test_a_bad_parameter_gets_400_naming_it(traffic: Session, path: str, said: str) -> None:
    status, answer, _ = call(traffic, "GET", path)
    assert status == 400
    assert answer["error"].startswith(said), answer["error"]


def test_a_body_over_8_mib_gets_413_before_it_is_read(traffic: Session) -> None:
    where = urlsplit(traffic.control_api_url)
    connection = http.client.HTTPConnection(where.hostname or "", where.port, timeout=10)
    connection.putrequest("DELETE", where.path + "/journal")
    connection.putheader("authorization", f"Bearer {traffic.environment[CONTROL_TOKEN_VARIABLE]}")
    connection.putheader("content-length", str(8 * 1024 * 1024 + 1))
    connection.endheaders()  # and not a byte of the body: the answer comes without it
    response = connection.getresponse()
    assert response.status == 413
    assert "8388608 at most" in json.load(response)["error"]
    connection.close()
    assert call(traffic, "GET", "/journal/1")[0] == 200  # the journal was not cleared, the API serves on


def test_the_openapi_document_describes_every_endpoint_from_its_models(traffic: Session) -> None:
    status, document, _ = call(traffic, "GET", "/openapi.json", token="read-only")
    assert status == 200
    assert document["openapi"] == "3.1.0"
    journal = document["paths"]["/llmproxy/api/v1/journal"]
    assert journal["get"]["x-llmproxy-access"] == "read"
    assert journal["delete"]["x-llmproxy-access"] == "mutate"
    assert {parameter["name"] for parameter in journal["get"]["parameters"]} == {
        "provider",
        "model",
        "path",
        "source",
        "testId",
        "since",
        "limit",
    }
    assert document["paths"]["/llmproxy/api/v1/journal/{seq}"]["get"]["parameters"][0]["in"] == "path"
    assert {"Status", "JournalPage", "JournalEntry", "Exchange"} <= set(document["components"]["schemas"])
    assert document == json.loads(PUBLISHED.read_text())  # what docs/ publishes is what a run serves


def test_clearing_the_journal_keeps_the_numbering(tmp_path: Path) -> None:
    """A journal of two: the third exchange drops the first, counted; cleared, the next is numbered on."""
    expectations = tmp_path / "expectations.json"
    expectations.write_text(json.dumps(EXPECTATIONS))
    plan = dataclasses.replace(mock_plan(expectations), journal=2)
    with running(Session.of(plan), Listening(ca_directory=tmp_path / "ca")) as proxy, openai_client(proxy) as client:
        ask = [{"role": "user", "content": "capital?"}]
        for _ in range(3):
            client.chat.completions.create(model="gpt-4o-mini", messages=ask)
        page = call(proxy, "GET", "/journal")[1]
        assert [entry["seq"] for entry in page["entries"]] == [2, 3]
        assert (page["counts"]["dropped"], page["counts"]["capacity"]) == (1, 2)
        assert call(proxy, "GET", "/journal/1")[1]["error"] == "the journal has no entry 1: it holds 2 to 3"
        assert call(proxy, "DELETE", "/journal")[:2] == (200, {"cleared": 2})
        client.chat.completions.create(model="gpt-4o-mini", messages=ask)
        assert [entry["seq"] for entry in call(proxy, "GET", "/journal")[1]["entries"]] == [4]
