"""The queue between the proxy's event loop and the thread that sends exchanges to the writer process.

Bounded by the bytes it holds (`limit`): when it is full, `put` hands back an awaitable instead of queueing,
and the recorder's hook awaits it, so that flow (and its client) waits for room while the event loop goes
on serving the others; nothing is dropped. The first time the proxy has to wait it says so, once, with a
warning on stderr. The writer process reads its pipe only as fast as it writes the cassette, so a slow
writer fills the pipe, then this queue, and then slows the clients, instead of growing without limit.
"""

import asyncio
import collections
import logging
import threading
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)


class Handover[T]:
    def __init__(self, limit: int, size: Callable[[T], int], warning: str) -> None:
        """`limit`: bytes held (by `size`) past which `put` makes the caller wait; `warning`: what to say the
        first time it does."""
        self.limit = limit
        self._size = size
        self._warning = warning
        self._items: collections.deque[tuple[T | None, int]] = collections.deque()
        self._held = 0  # bytes queued or being sent
        self._lock = threading.Condition()
        self._waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self.waited = 0  # how many times a put had to wait: back-pressure applied

    def put(self, item: T) -> Awaitable[None] | None:
        """Queue `item` and return None; when the queue is full, an awaitable that queues it once there is
        room (call from a running event loop)."""
        size = self._size(item)
        with self._lock:
            if self._held < self.limit or not self._items:
                self._queue(item, size)
                return None
        return self._put_later(item, size)

    def add(self, item: T | None) -> None:
        """Queue whatever the fill (for callers that cannot wait); None tells the consumer to stop."""
        with self._lock:
            self._queue(item, self._size(item) if item is not None else 0)

    def get(self) -> tuple[T | None, int]:
        """The next item and its size, waiting for one (the consumer thread). Call `sent` when it is gone."""
        with self._lock:
            while not self._items:
                self._lock.wait()
            return self._items.popleft()

    def sent(self, size: int) -> None:
        """An item of `size` bytes has left: its room is free again."""
        with self._lock:
            self._held -= size
            waiting, self._waiting = self._waiting, []
        for loop, future in waiting:
            loop.call_soon_threadsafe(_wake, future)

    async def _put_later(self, item: T, size: int) -> None:
        if not self.waited:
            logger.warning(self._warning)
        self.waited += 1
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                if self._held < self.limit or not self._items:
                    self._queue(item, size)
                    return
                future: asyncio.Future[None] = loop.create_future()
                self._waiting.append((loop, future))
            await future

    def _queue(self, item: T | None, size: int) -> None:
        self._items.append((item, size))
        self._held += size
        self._lock.notify()


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
