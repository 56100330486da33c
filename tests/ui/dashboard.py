"""What the dashboard's tests share: a running mock with the dashboard's URL, HTTP calls to its control port
without a proxy in between, and reading its event stream."""

import http.client
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest

from llmproxy.session import Session
from tests.mock.sdk_clients import serving

EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris is the capital of France."}},
        {"match": {"latestMessageContains": "weather"}, "respond": {"text": "Sunny."}, "times": 5},
    ]
}


def mock(factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(factory, EXPECTATIONS)


def get(
    url: str, path: str, headers: dict[str, str] | None = None, method: str = "GET", body: bytes | None = None
) -> http.client.HTTPResponse:
    """`path` on the origin of `url`, read whole, straight to the control port."""
    origin = urlsplit(url)
    connection = http.client.HTTPConnection(origin.hostname or "", origin.port, timeout=10)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    response.read()
    return response


def read_json(url: str, path: str, token: str) -> Any:
    """`path` on the origin of `url`, called with `token`, its JSON answer."""
    origin = urlsplit(url)
    connection = http.client.HTTPConnection(origin.hostname or "", origin.port, timeout=30)
    connection.request("GET", path, headers={"authorization": f"Bearer {token}"})
    response = connection.getresponse()
    assert response.status == 200, response.status
    return json.loads(response.read())


def cookie_of(session: Session, token: str | None = None) -> str:
    """The cookie the page gets when opened with its URL (or with `token` in place of its own)."""
    parts = urlsplit(session.ui_url)
    query = parts.query if token is None else f"token={token}"
    response = get(session.ui_url, f"{parts.path}?{query}")
    assert response.status == 303
    return (response.getheader("set-cookie") or "").split(";")[0]


@contextmanager
def events(session: Session, headers: dict[str, str]) -> Iterator[Iterator[tuple[str, Any]]]:
    """The event stream, as (event, data) pairs as they come."""
    origin = urlsplit(session.control_api_url)
    connection = http.client.HTTPConnection(origin.hostname or "", origin.port, timeout=10)
    connection.request("GET", f"{origin.path}/events", headers=headers)
    response = connection.getresponse()
    assert response.status == 200
    assert response.getheader("content-type") == "text/event-stream; charset=utf-8"

    def read() -> Iterator[tuple[str, Any]]:
        name = None
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: ") and name is not None:
                yield name, json.loads(line.removeprefix("data: "))
                name = None

    try:
        yield read()
    finally:
        connection.close()
