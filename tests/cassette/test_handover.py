"""The queue to the writer process is bounded: a full queue makes the flow wait, never the loop, never a drop."""

import asyncio
import logging
import threading

import pytest

from llmproxy.cassette.handover import Handover
from llmproxy.cassette.writer_process import QUEUE_BYTES, _size
from llmproxy.model.exchange import RawExchange
from tests.cassette.factory import exchange, request, response


def test_put_queues_until_the_limit_then_waits_for_room(caplog: pytest.LogCaptureFixture) -> None:
    handover: Handover[bytes] = Handover(100, len, "writer behind")
    got: list[bytes] = []

    async def scenario() -> None:
        assert handover.put(b"a" * 60) is None
        assert handover.put(b"b" * 60) is None  # 60 held: still under the limit
        waiting = handover.put(b"c" * 10)  # 120 held: the caller must wait
        assert waiting is not None
        task = asyncio.ensure_future(waiting)
        other = asyncio.ensure_future(asyncio.sleep(0, result="the loop goes on"))
        assert await other == "the loop goes on"
        assert not task.done()

        def consume() -> None:
            for _ in range(3):
                item, size = handover.get()
                assert item is not None
                got.append(item)
                handover.sent(size)

        thread = threading.Thread(target=consume)
        thread.start()
        await asyncio.wait_for(task, 5)
        await asyncio.to_thread(thread.join)

    with caplog.at_level(logging.WARNING):
        asyncio.run(scenario())
    assert got == [b"a" * 60, b"b" * 60, b"c" * 10]  # nothing dropped, in order
    assert handover.waited == 1
    assert caplog.messages == ["writer behind"]


def test_an_item_larger_than_the_limit_still_goes_when_the_queue_is_empty() -> None:
    handover: Handover[bytes] = Handover(10, len, "behind")
    assert handover.put(b"x" * 1000) is None
    handover.add(None)
    assert handover.get() == (b"x" * 1000, 1000)
    assert handover.get() == (None, 0)


def test_the_writers_queue_holds_a_fraction_of_a_second_of_small_exchanges() -> None:
    """A proxy that forwards 1 KB exchanges faster than the writer writes them waits after a few hundred, not
    thousands: what is queued at shutdown drains within its 2 s (the writer's fixed work is ~0.4 ms each)."""
    small = exchange(request({"model": "m", "messages": [{"role": "user", "content": "x" * 1000}]}), response())
    queue: Handover[RawExchange | str] = Handover(QUEUE_BYTES, _size, "behind")

    async def fill() -> int:
        queued = 0
        while (waiting := queue.put(small)) is None:
            queued += 1
        task = asyncio.ensure_future(waiting)  # the one that found the queue full waits for room: none comes
        task.cancel()
        return queued

    queued = asyncio.run(fill())
    assert 100 <= queued <= 600
    assert queued * 0.0004 < 2
