"""The official openai SDK's Responses WebSocket (`client.responses.connect()`), as the WebSocket tests drive it:
through llmproxy's proxy to the real host name (its CA trusted), or straight to a base URL."""

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai

# websockets' own default, 10 s, was once exceeded by a handshake through the proxy while CI's two cores ran the
# whole suite: a slow machine is not what these tests examine, a hang still fails them.
OPEN_TIMEOUT = 60

KEY = "sk-proj-" + "Qw3eR5tY7uI9oP1aS3dF5gH7jK9lZ1xC" * 2
ENDS = ("response.completed", "response.failed", "response.incomplete", "error")


@contextmanager
def through_proxy(proxy_url: str, ca_cert: Path, headers: dict[str, str] | None = None) -> Iterator[Any]:
    """A connection to wss://api.openai.com/v1/responses through the proxy."""
    trust = ssl.create_default_context(cafile=str(ca_cert))
    client = openai.OpenAI(api_key=KEY)
    options = {"proxy": proxy_url, "ssl": trust, "open_timeout": OPEN_TIMEOUT}
    with client.responses.connect(extra_headers=headers or {}, websocket_connection_options=options) as socket:
        yield socket


@contextmanager
def at_base_url(base_url: str, headers: dict[str, str] | None = None) -> Iterator[Any]:
    """A connection to `base_url`/v1/responses (ws://), with no proxy."""
    client = openai.OpenAI(api_key=KEY, base_url=f"{base_url}/v1")
    options = {"proxy": None, "open_timeout": OPEN_TIMEOUT}
    with client.responses.connect(extra_headers=headers or {}, websocket_connection_options=options) as socket:
        yield socket


def answer(connection: Any, **request: Any) -> list[Any]:
    """Send one `response.create` and read the events up to the one that ends its answer."""
    connection.response.create(**request)
    events = []
    for event in connection:
        events.append(event)
        if event.type in ENDS:
            return events
    raise AssertionError("the connection closed before the answer ended")
