"""The journal: what the proxy saw while it runs, newest last, for the control API to read back.

Each exchange — answered live, replayed, mocked, injected, missed or failed — is read back in the cassette's
shape (`llmproxy.cassette.model.Exchange`), converted by the same code with the same redactor as a recording,
so the journal shows nothing a cassette would not write. It is converted the first time something reads it
whole, not while the proxy answers: the traffic pays for keeping an exchange, not for redacting it. A listing
reads only its `Glance` (the redacted URL and model, the status, the usage), which costs a small part of a
conversion. The captured form is kept beside it, never shown: saving the journal to a cassette hands it to the
recorder's own writer.

On the request's path the journal only appends the capture, one tuple, to a bounded deque under a lock held
for that append; the `Entry` a reader sees is made from it the first time something reads it, and kept while
the capture is. Counts by source are taken when they are asked for, of what is kept and of what was dropped
or cleared (counted as it went).

It is bounded: once `capacity` entries are kept, each new one pushes out the oldest and `dropped` counts them,
so a long run cannot grow memory without limit. Entries are numbered from 1 in the order they ended (`seq`); a
reader asks for what came after the last number it saw.
"""

import threading
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from itertools import islice
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from llmproxy.cassette.model import Exchange
from llmproxy.chain.incoming import Incoming
from llmproxy.model import Usage
from llmproxy.model.exchange import RawExchange, RawRequest

DEFAULT_CAPACITY: Final = 1000


class Source(StrEnum):
    """Who answered: the network, a recording, an expectation, a fault put in on purpose, nothing (refused),
    llmproxy on a coding CLI's background traffic (telemetry, update checks: answered harmlessly), llmproxy
    failing, or a cassette read at rest (no proxy running)."""

    LIVE = "live"
    REPLAYED = "replayed"
    MOCKED = "mocked"
    INJECTED = "injected"
    MISSED = "missed"
    BACKGROUND = "background"
    ERROR = "error"
    CASSETTE = "cassette"  # read from a cassette at rest (`llmproxy ui CASSETTE`): no proxy answered it


@dataclass(frozen=True, slots=True)
class Glance:
    """What a listing shows of an exchange, read from its capture without converting it whole. Every text in it
    is what the whole conversion shows: the URL and the model redacted by the same redactor; the rest are
    numbers, names of APIs and the faults' kinds."""

    at: datetime
    method: str
    url: str
    provider: str | None
    operation: str | None
    vendor: str | None
    model: str | None
    status: int | None
    streaming: bool
    latency_ms: float | None
    ttfb_ms: float | None  # time to the answer's first byte: a stream's first event
    usage: Usage | None  # what the answer says it used; None when it is not a chat API's, or says nothing
    error: str | None
    injected: tuple[str, ...]


class Reader(Protocol):
    """How a tap reads back what it kept of an exchange (`kept`, opaque to the journal)."""

    def captured(self, kept: Any) -> RawExchange:
        """As captured, in the shape the recorder takes it, unredacted: what saving the journal to a cassette
        hands to the recorder's own writer, which redacts it as it redacts a recording."""
        ...

    def exchange(self, kept: Any, seq: int) -> Exchange:
        """Converted and redacted, as a cassette stores it, with `seq` as its id."""
        ...

    def glance(self, kept: Any) -> Glance: ...


type Capture = tuple[Source, str | None, RawRequest, Reader, Any, str | None]
"""An exchange as `Journal.add` keeps it: who answered, the test, the request, the reader of `kept`, `kept`, the
door it came through."""


class Entry:
    """One exchange of the journal, made from its capture the first time something reads it."""

    __slots__ = (
        "_exchange",
        "_glance",
        "_incoming",
        "_kept",
        "_reader",
        "door",
        "request",
        "seq",
        "source",
        "test_id",
    )

    def __init__(self, seq: int, capture: Capture) -> None:
        """`request`: as the client sent it, unredacted, for verifying what was sent with the mock's predicates;
        never shown (what is shown is `exchange` and `glance`). `door`: how the request reached llmproxy (`proxy`,
        `relay`, `websocket`; None for a cassette at rest)."""
        self.seq = seq
        self.source, self.test_id, self.request, self._reader, self._kept, self.door = capture
        self._exchange: Exchange | None = None
        self._glance: Glance | None = None
        self._incoming: Incoming | None = None

    def captured(self) -> RawExchange:
        """Never shown: only written through the recorder's writer."""
        return self._reader.captured(self._kept)

    @property
    def exchange(self) -> Exchange:
        """Redacted, as a cassette stores it; its `id` is `seq`. Two readers at once may both convert it: the
        same result, kept once."""
        exchange = self._exchange
        if exchange is None:
            exchange = self._exchange = self._reader.exchange(self._kept, self.seq)
        return exchange

    @property
    def glance(self) -> Glance:
        """What a listing shows, kept once read. Two readers at once may both read it: the same result."""
        glance = self._glance
        if glance is None:
            glance = self._glance = self._reader.glance(self._kept)
        return glance

    @property
    def incoming(self) -> Incoming:
        """The request as the chain reads it (its API, JSON, model, conversation), read the first time a verify
        needs it and kept: verifying again, or over a long journal, reparses nothing. Two readers at once may
        both read it: the same result."""
        incoming = self._incoming
        if incoming is None:
            incoming = self._incoming = Incoming(self.request)
        return incoming

    @property
    def path(self) -> str:
        """The request's path, redacted as the URL shown."""
        return urlsplit(self.glance.url).path


@dataclass(frozen=True, slots=True)
class Query:
    """Which entries to read: every given filter must hold; `since`: only those numbered after it; `limit`: the
    newest that many of what matches (still newest last)."""

    provider: str | None = None
    model: str | None = None
    path: str | None = None  # a prefix of the request's path
    source: Source | None = None
    test_id: str | None = None
    since: int = 0
    limit: int | None = None

    def matches(self, entry: Entry) -> bool:
        """Whether `entry` is wanted; its glance read only when a filter needs it."""
        return (
            entry.seq > self.since
            and (self.source is None or entry.source is self.source)
            and (self.test_id is None or entry.test_id == self.test_id)
            and (self.provider is None or entry.glance.provider == self.provider)
            and (self.model is None or entry.glance.model == self.model)
            and (self.path is None or entry.path.startswith(self.path))
        )


class Journal:
    """Safe to use from any thread: the proxy's doors add, the control API reads. Adding takes a lock only for
    its append; readers take one of their own while they make entries, so a long read never holds up a
    request."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"a journal keeps at least one exchange, not {capacity}")
        self.capacity = capacity
        self._captures: deque[Capture] = deque(maxlen=capacity)
        self._lock = threading.Lock()  # adding, and any look at the captures and the numbers
        self._added = threading.Condition(self._lock)  # what a watcher (`wait`) sleeps on
        self._watchers = 0  # how many sleep on it now: with none, adding notifies nobody
        self._last = 0
        self._cleared = 0
        self._gone: Counter[Source] = Counter()  # dropped or cleared, by who answered
        self._reading = threading.Lock()  # making entries, and forgetting those of dropped captures
        self._entries: dict[int, Entry] = {}  # made, by number
        self._forgotten = 0  # every entry numbered up to this one is out of `_entries`

    def add(
        self,
        source: Source,
        test_id: str | None,
        request: RawRequest,
        reader: Reader,
        kept: Any,
        door: str | None = None,
    ) -> None:
        """Keep an exchange (numbered in the order added: its number is its id), the oldest dropped when full;
        `door`: how its request reached llmproxy."""
        captures = self._captures
        with self._lock:
            self._last += 1
            if len(captures) == self.capacity:  # the oldest goes: counted now, while it is known
                self._gone[captures[0][0]] += 1
            captures.append((source, test_id, request, reader, kept, door))
            if self._watchers:
                self._added.notify_all()

    def wait(self, after: int, timeout: float) -> int:
        """Sleep until an entry numbered after `after` is added, or `timeout` seconds pass; the newest number.
        For a reader that pushes what is new (the control API's event stream) without polling, and without
        the proxy's requests doing more than a notify while it sleeps."""
        with self._added:
            if self._last <= after:
                self._watchers += 1
                try:
                    self._added.wait(timeout)
                finally:
                    self._watchers -= 1
            return self._last

    def read(self, query: Query = Query()) -> list[Entry]:
        with self._lock:
            captures = list(self._captures)
            first = self._last - len(captures) + 1
        start = max(0, query.since - first + 1)
        with self._reading:
            self._forget(first)
            if query.limit is None:
                return [entry for entry in self._made(captures, first, start) if query.matches(entry)]
            if query.limit <= 0:
                return []
            newest = (entry for entry in self._made(captures, first, start, newest=True) if query.matches(entry))
            return list(islice(newest, query.limit))[::-1]

    def get(self, seq: int) -> Entry | None:
        """One entry by its number; None when it never was, or was dropped."""
        with self._lock:
            first = self._last - len(self._captures) + 1
            if not first <= seq <= self._last:
                return None
            capture = self._captures[seq - first]
        with self._reading:
            self._forget(first)
            return self._entry(seq, capture)

    def clear(self) -> int:
        """Forget every entry (numbering goes on, so a reader's `since` stays meaningful); how many there were."""
        with self._reading, self._lock:
            cleared = len(self._captures)
            self._gone.update(capture[0] for capture in self._captures)
            self._captures.clear()
            self._cleared += cleared
            self._entries.clear()
            self._forgotten = self._last
        return cleared

    @property
    def last(self) -> int:
        """The number of the newest entry ever added (0: none yet)."""
        return self._last

    @property
    def dropped(self) -> int:
        """Entries pushed out because the journal was full."""
        with self._lock:
            return self._last - self._cleared - len(self._captures)

    @property
    def kept(self) -> int:
        return len(self._captures)

    def counts(self) -> dict[Source, int]:
        """Exchanges seen since the start, by who answered (dropped and cleared ones included)."""
        with self._lock:
            counts = self._gone.copy()
            counts.update(capture[0] for capture in self._captures)
        return {source: count for source, count in counts.items() if count}

    def _made(self, captures: list[Capture], first: int, start: int, newest: bool = False) -> Iterator[Entry]:
        """The entries of `captures` (numbered from `first`) from position `start` on, oldest first, or newest
        first down to `start`."""
        positions = range(len(captures) - 1, start - 1, -1) if newest else range(start, len(captures))
        for position in positions:
            yield self._entry(first + position, captures[position])

    def _entry(self, seq: int, capture: Capture) -> Entry:
        entry = self._entries.get(seq)
        if entry is None:
            entry = self._entries[seq] = Entry(seq, capture)
        return entry

    def _forget(self, first: int) -> None:
        """Let go of the entries made for captures the journal has since dropped (those numbered before
        `first`)."""
        if first - 1 <= self._forgotten:
            return
        if first - 1 - self._forgotten > len(self._entries):
            self._entries = {seq: entry for seq, entry in self._entries.items() if seq >= first}
        else:
            for seq in range(self._forgotten + 1, first):
                self._entries.pop(seq, None)
        self._forgotten = first - 1
