"""The control API's event stream: what is new in the run, pushed to every reader of `GET /events`
(server-sent events) — each new journal entry as the journal listing summarises it, and the run's counters
(chaos, quotas, budget, expectations' hits) when they change.

The proxy's requests never wait for a reader. The journal tap only appends, as always; one publisher thread,
running while someone reads the stream, sleeps on the journal (`Journal.wait`), lets what comes next gather
for a moment (`BATCH`), reads what was added, encodes each event once and offers them to every reader's queue
as one batch; a reader writes what its queue holds in one write. So a busy run costs a wake, a queue put and
a write per batch, not per exchange, and the counters are looked at every `COUNTERS_EVERY` seconds, not on
every wake. A queue is bounded: a reader that does not keep up (a slow or gone browser) has batches dropped,
their events counted and told in the stream (`dropped`), never queued without bound and never slowing the
proxy.
"""

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Final

import orjson
from pydantic import BaseModel

from llmproxy.control.event_models import Counters, Dropped, Hello
from llmproxy.journal import Entry, Journal, Query

logger = logging.getLogger(__name__)

QUEUE: Final = 1000  # batches of events held for one reader before new ones are dropped
COUNTERS_EVERY: Final = 0.5  # seconds between looks at the counters (while someone reads)
BATCH: Final = 0.05  # seconds the publisher lets entries gather once one has come: a page sees them this late
HEARTBEAT: Final = 15.0  # seconds of quiet before a comment line, which finds a reader that went away
_CLOSED: Final = b""  # put in a reader's queue when the stream ends


def encode(event: str, data: BaseModel, seq: int | None = None) -> bytes:
    """One server-sent event, its data the model's JSON on one line."""
    line = orjson.dumps(data.model_dump(mode="json", by_alias=True, exclude_none=True))
    head = f"event: {event}\n" + (f"id: {seq}\n" if seq is not None else "")
    return head.encode() + b"data: " + line + b"\n\n"


class _Reader:
    __slots__ = ("dropped", "queue")

    def __init__(self, capacity: int) -> None:
        self.queue: queue.Queue[bytes] = queue.Queue(capacity)
        self.dropped = 0

    def offer(self, batch: bytes, events: int) -> None:
        """`batch`: `events` events, encoded one after another."""
        try:
            self.queue.put_nowait(batch)
        except queue.Full:
            self.dropped += events

    def end(self) -> None:
        """Its stream ends after what it holds; a full queue loses what it held, which no one would read."""
        while True:
            try:
                self.queue.put_nowait(_CLOSED)
                return
            except queue.Full:
                with contextlib.suppress(queue.Empty):
                    self.queue.get_nowait()


class EventHub:
    """The publisher and its readers. `entry_event` makes a journal entry's event, encoded; `counters` reads the
    run's counters (compared with the last sent, sent when different)."""

    def __init__(
        self,
        journal: Journal | None,
        entry_event: Callable[[Entry], bytes],
        counters: Callable[[], Counters],
        capacity: int = QUEUE,
    ) -> None:
        self.journal = journal
        self.entry_event = entry_event
        self.counters = counters
        self.capacity = capacity
        self._readers: set[_Reader] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.published = 0  # journal entries read and offered to the readers so far

    @property
    def readers(self) -> int:
        with self._lock:
            return len(self._readers)

    @property
    def dropped(self) -> int:
        """Events dropped so far for the readers there are now."""
        with self._lock:
            return sum(reader.dropped for reader in self._readers)

    def stream(self) -> Iterator[bytes]:
        """One reader's events, until it goes away (the generator closed) or the hub closes: `hello`, then what
        is new. Subscribed before `hello` is made, so nothing added in between is missed."""
        reader = _Reader(self.capacity)
        with self._lock:
            if self._closed:
                return
            self._readers.add(reader)
            if self._thread is None:
                self._thread = threading.Thread(target=self._publish, name="llmproxy-events", daemon=True)
                self._thread.start()
        try:
            yield encode("hello", Hello(counts=self.counters().counts, queue=self.capacity))
            told = 0
            while True:
                try:
                    batches = [reader.queue.get(timeout=HEARTBEAT)]
                except queue.Empty:
                    yield b": still here\n\n"
                    continue
                with contextlib.suppress(queue.Empty):  # what else it holds goes in the same write
                    while batches[-1] != _CLOSED:
                        batches.append(reader.queue.get_nowait())
                if reader.dropped != told:
                    told = reader.dropped
                    batches.insert(0, encode("dropped", Dropped(dropped=told)))
                written = b"".join(batches)
                if written:
                    yield written
                if batches[-1] == _CLOSED:
                    return
        finally:
            with self._lock:
                self._readers.discard(reader)

    def close(self) -> None:
        """End every stream (the control port closes)."""
        with self._lock:
            self._closed = True
            readers = list(self._readers)
        for reader in readers:
            reader.end()

    def _publish(self) -> None:
        """While anyone reads: each new journal entry, and the counters when they change, to every reader."""
        seen = self.journal.last if self.journal is not None else 0
        sent: Counters | None = None
        looked = -COUNTERS_EVERY
        while True:
            with self._lock:
                if not self._readers or self._closed:
                    self._thread = None
                    return
                readers = list(self._readers)
            try:
                if self.journal is not None:
                    last = self.journal.wait(seen, COUNTERS_EVERY)
                    if last > seen:
                        time.sleep(BATCH)
                        entries = self.journal.read(Query(since=seen))
                        seen = entries[-1].seq if entries else last  # none: cleared meanwhile
                        if entries:
                            batch = b"".join([self.entry_event(entry) for entry in entries])
                            for reader in readers:
                                reader.offer(batch, len(entries))
                            self.published += len(entries)
                else:
                    time.sleep(COUNTERS_EVERY)
                now = time.monotonic()
                if now - looked >= COUNTERS_EVERY:
                    looked = now
                    counters = self.counters()
                    if counters != sent:
                        sent = counters
                        event = encode("counters", counters)
                        for reader in readers:
                            reader.offer(event, 1)
            except Exception:  # a bug of llmproxy's: logged, and the stream carries on with what comes next
                logger.exception("the control API's event stream failed to publish")
                time.sleep(COUNTERS_EVERY)
