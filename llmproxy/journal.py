"""The journal: what the proxy saw while it runs, newest last, for the control API to read back.

Each exchange — answered live, replayed, mocked, injected, missed or failed — is read back in the cassette's
shape (`llmproxy.cassette.model.Exchange`), converted by the same code with the same redactor as a recording,
so the journal shows nothing a cassette would not write. It is converted the first time something reads it,
not while the proxy answers: the traffic pays for keeping an exchange, not for redacting it. The captured form
is kept beside it, never shown: saving the journal to a cassette hands it to the recorder's own writer.

It is bounded: once `capacity` entries are kept, each new one pushes out the oldest and `dropped` counts them,
so a long run cannot grow memory without limit. Entries are numbered from 1 in the order they ended (`seq`); a
reader asks for what came after the last number it saw.
"""

import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final
from urllib.parse import urlsplit

from llmproxy.cassette.model import Exchange
from llmproxy.chain.incoming import Incoming
from llmproxy.model.exchange import RawExchange, RawRequest

DEFAULT_CAPACITY: Final = 1000


class Source(StrEnum):
    """Who answered: the network, a recording, an expectation, a fault put in on purpose, nothing (refused),
    llmproxy on a coding CLI's background traffic (telemetry, update checks: answered harmlessly), or llmproxy
    failing."""

    LIVE = "live"
    REPLAYED = "replayed"
    MOCKED = "mocked"
    INJECTED = "injected"
    MISSED = "missed"
    BACKGROUND = "background"
    ERROR = "error"


type Convert = Callable[[int], Exchange]
"""An exchange as it was captured, to be converted and redacted (given its id) when first read."""
type Captured = Callable[[], RawExchange]
"""An exchange as it was captured, in the shape the recorder takes it, unredacted: what saving the journal to a
cassette hands to the recorder's own writer, which redacts it as it redacts a recording."""


class Entry:
    __slots__ = ("_convert", "_exchange", "_incoming", "captured", "request", "seq", "source", "test_id")

    def __init__(
        self, seq: int, source: Source, test_id: str | None, request: RawRequest, convert: Convert, captured: Captured
    ) -> None:
        """`request`: as the client sent it, unredacted, for verifying what was sent with the mock's predicates;
        never shown (what is shown is `exchange`). `captured`: never shown either, only written through the
        recorder's writer."""
        self.seq = seq
        self.source = source
        self.test_id = test_id
        self.request = request
        self.captured = captured
        self._convert: Convert | None = convert
        self._exchange: Exchange | None = None
        self._incoming: Incoming | None = None

    @property
    def exchange(self) -> Exchange:
        """Redacted, as a cassette stores it; its `id` is `seq`. Two readers at once may both convert it: the
        same result, kept once."""
        exchange = self._exchange
        if exchange is None:
            convert = self._convert
            if convert is None:  # another reader finished between the two looks
                return self.exchange
            exchange = self._exchange = convert(self.seq)
            self._convert = None
        return exchange

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
        return urlsplit(self.exchange.request.url).path


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
        """Whether `entry` is wanted; its exchange converted only when a filter needs it."""
        return (
            entry.seq > self.since
            and (self.source is None or entry.source is self.source)
            and (self.test_id is None or entry.test_id == self.test_id)
            and (self.provider is None or entry.exchange.provider == self.provider)
            and (self.model is None or entry.exchange.model == self.model)
            and (self.path is None or entry.path.startswith(self.path))
        )


class Journal:
    """Safe to use from any thread: the proxy's doors add, the control API reads."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"a journal keeps at least one exchange, not {capacity}")
        self.capacity = capacity
        self._entries: deque[Entry] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self._last = 0
        self._dropped = 0
        self._sources: Counter[Source] = Counter()

    def add(
        self, source: Source, test_id: str | None, request: RawRequest, convert: Convert, captured: Captured
    ) -> Entry:
        """Keep an exchange (numbered here: its sequence number is its id), the oldest dropped when full."""
        with self._lock:
            self._last += 1
            entry = Entry(self._last, source, test_id, request, convert, captured)
            if len(self._entries) == self.capacity:
                self._dropped += 1
            self._entries.append(entry)
            self._sources[source] += 1
        return entry

    def read(self, query: Query = Query()) -> list[Entry]:
        with self._lock:
            entries = list(self._entries)
        found = [entry for entry in entries if query.matches(entry)]
        if query.limit is None:
            return found
        return found[-query.limit :] if query.limit > 0 else []  # found[-0:] would be everything

    def get(self, seq: int) -> Entry | None:
        """One entry by its number; None when it never was, or was dropped."""
        with self._lock:
            if not self._entries or not self._entries[0].seq <= seq <= self._last:
                return None
            return self._entries[seq - self._entries[0].seq]

    def clear(self) -> int:
        """Forget every entry (numbering goes on, so a reader's `since` stays meaningful); how many there were."""
        with self._lock:
            cleared = len(self._entries)
            self._entries.clear()
        return cleared

    @property
    def last(self) -> int:
        """The number of the newest entry ever added (0: none yet)."""
        return self._last

    @property
    def dropped(self) -> int:
        """Entries pushed out because the journal was full."""
        return self._dropped

    @property
    def kept(self) -> int:
        return len(self._entries)

    def counts(self) -> dict[Source, int]:
        """Exchanges seen since the start, by who answered (dropped and cleared ones included)."""
        with self._lock:
            return dict(self._sources)
