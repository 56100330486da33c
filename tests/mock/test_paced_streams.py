"""Streaming physics on the wire: a mocked stream reaches the client event by event at the offsets its physics
give (time to first token, tokens per second, seeded jitter), through the proxy and the loopback relay.

Tolerance as for replay timing (tests/replay/test_timing.py): on a connection already set up, events arrived
3.2–5.3 ms after their offsets on this machine (5 runs: the client-to-proxy leg and the relay hop); 40 ms is
allowed, while a stream sent at once (all events within ~5 ms) or at the wrong pace (gaps of ~75 ms) fails.
"""

import gc
import itertools
import json
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2 as httpx
import orjson

from llmproxy.chain import Incoming
from llmproxy.mock import spec
from llmproxy.mock.reply import encode_respond
from llmproxy.session import Listening, Session, mocking
from tests.cassette.factory import request

TOLERANCE_MS = 40
PHYSICS = {"ttftMs": 150, "tokensPerSecond": 40, "jitter": 0.3, "seed": 3}
TEXT = "The quick brown fox jumps over the lazy dog. " * 3
REQUEST = {
    "model": "claude-haiku-4-5",
    "max_tokens": 100,
    "stream": True,
    "messages": [{"role": "user", "content": "go"}],
}


def arrivals(proxy: Session) -> list[float]:
    """Milliseconds from sending the request to each event's arrival, on a connection already set up (the
    first request pays for the proxy's CONNECT and TLS handshake)."""
    trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
    with httpx.Client(proxy=proxy.url, verify=trust, timeout=30) as client:
        offsets: list[float] = []
        for _ in range(2):
            offsets = []
            start = time.monotonic()
            headers = {"anthropic-version": "2023-06-01"}
            url = "https://api.anthropic.com/v1/messages"
            with client.stream("POST", url, json=REQUEST, headers=headers) as response:
                buffer = b""
                for chunk in response.iter_raw():
                    buffer += chunk
                    while b"\n\n" in buffer:
                        _, buffer = buffer.split(b"\n\n", 1)
                        offsets.append((time.monotonic() - start) * 1000)
    return offsets


@contextmanager
def collector_paused() -> Iterator[None]:
    """The proxy runs in this test process, which holds every earlier test's objects: a full collection
    there pauses it for ~100 ms. `llmproxy mock` runs in a small process of its own."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def planned() -> list[float]:
    """The offsets the physics give for this answer, in milliseconds."""
    body = orjson.dumps(REQUEST)
    raw = request(body, headers=())
    respond = spec.Respond.model_validate({"text": TEXT, "physics": PHYSICS})
    reply = encode_respond(respond, Incoming(raw))
    assert reply.events is not None
    return [at * 1000 for at, _ in reply.events]


def test_a_stream_arrives_at_its_physics_offsets(tmp_path: Path) -> None:
    expectations = tmp_path / "expectations.json"
    expectations.write_text(json.dumps({"expectations": [{"respond": {"text": TEXT, "physics": PHYSICS}}]}))
    offsets = planned()
    assert offsets == planned()  # the same seed, the same timing
    assert offsets[0] == PHYSICS["ttftMs"]
    gaps = [later - earlier for earlier, later in itertools.pairwise(offsets)]
    assert len(set(gaps)) > 1  # jitter varies the gaps

    with mocking(expectations, Listening(ca_directory=tmp_path / "ca")) as proxy, collector_paused():
        received = arrivals(proxy)
    assert len(received) == len(offsets)
    late = [abs(got - want) for got, want in zip(received, offsets, strict=True)]
    assert max(late) < TOLERANCE_MS, (offsets, received)
    assert received[-1] > 500  # paced, not sent at once
