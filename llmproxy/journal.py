"""The journal: what the proxy saw while it runs, newest last, for the control API to read back.

Each exchange — answered live, replayed, mocked, injected, missed or failed — is read back in the cassette's
shape (`llmproxy.cassette.model.Exchange`), converted by the same code with the same redactor as a recording,
so the journal shows nothing a cassette would not write. It is converted each time something reads it whole,
not while the proxy answers: the traffic pays for keeping an exchange, not for redacting it. The exchanges
read whole last (`RECENT` of them: the entries a page shows in detail) are kept for the next read; the rest
are let go, so an entry once read holds no more than before (a converted exchange is several times its
bodies). A listing reads only its `Glance` (the redacted URL and model, the status, the usage), which costs a
small part of a conversion and is kept. The captured form is what the entry keeps, never shown: saving the
journal to a cassette hands it to the recorder's own writer.

On the request's path the journal only appends the capture, one tuple, to a list (an append is atomic: no
lock is taken); the `Entry` a reader sees is made from it the first time something reads it, and kept while
the capture is. Counts by source are taken when they are asked for, counting only what came since they last
were (a capture let go before it was counted is counted as it goes).

It is bounded: once `capacity` entries are kept, each new one pushes out the oldest and `dropped` counts them,
so a long run cannot grow memory without limit (the oldest are let go in batches: see `Journal`). Entries are
numbered from 1 in the order they ended (`seq`); a reader asks for what came after the last number it saw.
"""

import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from itertools import islice
from operator import itemgetter
from typing import Any, Final, NamedTuple, Protocol
from urllib.parse import urlsplit

from llmproxy.cassette.model import Exchange
from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Incoming
from llmproxy.mock.asked import Asked
from llmproxy.model import Route, Usage
from llmproxy.model.exchange import RawExchange, RawRequest

DEFAULT_CAPACITY: Final = 1000
RECENT: Final = 64  # exchanges read whole that the journal keeps for the next read, the last read


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


class Glance(NamedTuple):
    """What a listing shows of an exchange, read from its capture without converting it whole. Every text in it
    is what the whole conversion shows: the URL and the model redacted by the same redactor; the rest are
    numbers, names of APIs and the faults' kinds. A named tuple: a watched run makes one for every exchange,
    and a frozen dataclass of these fields costs several times as much to make."""

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
    latency_recorded: bool = False  # the latency and first byte are a replayed answer's, as recorded


class Seen(NamedTuple):
    """An exchange as the gates read it off its capture, nothing rebuilt (`Reader.seen`): the request as the
    client sent it, unredacted; the answer's status (None: no answer came), headers and body (None when it
    streamed, or there was none); whether its bytes are still content-encoded; when it started; the WebSocket
    connection it was on. Never shown: what is shown of it is redacted (`analysis.answered`).

    `route` and `model`: what the chain read of the request while it answered (`Incoming.route`, `.model`),
    kept by the tap where its body was a JSON object: a gate then parses the request no more. None when not
    known (a cassette at rest, a request the chain could not read): the gate reads the request itself."""

    request: RawRequest
    status: int | None
    headers: tuple[tuple[str, str], ...]
    body: bytes | None
    streamed: bool
    undecodable: str | None
    started_at: datetime
    websocket: int | None
    route: Route | None = None
    model: str | None = None


class Reader(Protocol):
    """How a tap reads back what it kept of an exchange: its capture (`Capture`), whose parts after the first
    four are the tap's own, opaque to the journal."""

    def request(self, capture: "Capture") -> RawRequest:
        """The request as the client sent it, unredacted: verify judges it with the mock's predicates; never
        shown."""
        ...

    def captured(self, capture: "Capture") -> RawExchange:
        """As captured, in the shape the recorder takes it, unredacted: what saving the journal to a cassette
        hands to the recorder's own writer, which redacts it as it redacts a recording."""
        ...

    def exchange(self, capture: "Capture", seq: int) -> Exchange:
        """Converted and redacted, as a cassette stores it, with `seq` as its id."""
        ...

    def glance(self, capture: "Capture") -> Glance: ...

    def seen(self, capture: "Capture") -> Seen:
        """What the gates read of it, nothing rebuilt: a few fields taken off the capture."""
        ...

    @property
    def redactor(self) -> Redactor:
        """What `exchange` redacts with: what is shown of a capture read otherwise is redacted by it too."""
        ...


type Capture = tuple[Source, str | None, Reader, str | None, *tuple[Any, ...]]
"""An exchange as a tap hands it to `Journal.add`, and the journal keeps it: who answered, the test, the `Reader`
that reads it back, the door its request came through (`proxy`, `relay`, `websocket`; None for a cassette at
rest), then the tap's own parts. One flat tuple: the collector's passes cost each request what it leaves alive,
object by object."""


class Recent:
    """The exchanges read whole last, by entry number, at most `size` of them: a page that shows an entry in
    detail reads it again (and the call before it) without converting it again, while a journal of thousands
    read whole once (a report's read) keeps none of them. Safe to use from any thread."""

    def __init__(self, size: int = RECENT) -> None:
        self.size = size
        self._kept: OrderedDict[int, Exchange] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, seq: int) -> Exchange | None:
        with self._lock:
            exchange = self._kept.get(seq)
            if exchange is not None:
                self._kept.move_to_end(seq)
            return exchange

    def keep(self, seq: int, exchange: Exchange) -> Exchange:
        """Keep `exchange`, letting the least recently read go; the one kept for `seq` (a reader beside this
        one may have kept the same conversion first)."""
        with self._lock:
            exchange = self._kept.setdefault(seq, exchange)
            self._kept.move_to_end(seq)
            if len(self._kept) > self.size:
                self._kept.popitem(last=False)
            return exchange

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


class Entry:
    """One exchange of the journal, made from its capture the first time something reads it."""

    __slots__ = (
        "_asked",
        "_capture",
        "_glance",
        "_incoming",
        "_reader",
        "_recent",
        "door",
        "seq",
        "source",
        "test_id",
    )

    def __init__(self, seq: int, capture: Capture, recent: Recent) -> None:
        """`door`: how the request reached llmproxy (`proxy`, `relay`, `websocket`; None for a cassette at
        rest). `recent`: the journal's last read whole, where its exchange is kept once read."""
        self.seq = seq
        self.source, self.test_id, self._reader, self.door = capture[0], capture[1], capture[2], capture[3]
        self._capture = capture
        self._recent = recent
        self._glance: Glance | None = None
        self._incoming: Incoming | None = None
        self._asked: Asked | None = None

    @property
    def request(self) -> RawRequest:
        """As the client sent it, unredacted, for verifying what was sent with the mock's predicates; never shown
        (what is shown is `exchange` and `glance`)."""
        return self._reader.request(self._capture)

    def captured(self) -> RawExchange:
        """Never shown: only written through the recorder's writer."""
        return self._reader.captured(self._capture)

    def seen(self) -> Seen:
        """What the gates read of it (`analysis.answered`, which redacts what it shows with `redactor`)."""
        return self._reader.seen(self._capture)

    @property
    def redactor(self) -> Redactor:
        """What the entry's exchange is redacted with."""
        return self._reader.redactor

    @property
    def exchange(self) -> Exchange:
        """Redacted, as a cassette stores it; its `id` is `seq`. Kept among the journal's last read whole
        (`Recent`): what a page shows in detail is read again as it was. Two readers at once may both convert
        it: the same result, kept once."""
        exchange = self._recent.get(self.seq)
        if exchange is None:
            exchange = self._recent.keep(self.seq, self.converted())
        return exchange

    def converted(self) -> Exchange:
        """`exchange` converted afresh and not kept: for a reader of many entries at once (a report), which
        keeps what it reads of each itself, so the last read whole stay those a page shows."""
        return self._reader.exchange(self._capture, self.seq)

    @property
    def glance(self) -> Glance:
        """What a listing shows, kept once read. Two readers at once may both read it: the same result."""
        glance = self._glance
        if glance is None:
            glance = self._glance = self._reader.glance(self._capture)
        return glance

    @property
    def incoming(self) -> Incoming:
        """The request as the chain reads it (its API, JSON, model, conversation), read the first time something
        needs it whole (explaining a miss) and kept. Two readers at once may both read it: the same result."""
        incoming = self._incoming
        if incoming is None:
            incoming = self._incoming = Incoming(self.request)
        return incoming

    def asked(self, conversation: bool = False) -> Asked:
        """The request as a verify's predicates read it, no further than they ask (`llmproxy.mock.asked`), read
        the first time a verify judges it and kept: verifying again reparses nothing. `conversation`: the
        predicates ask about the conversation, read from the same parse when the entry is first read. Two
        readers at once may both read it: the same result."""
        asked = self._asked
        if asked is None:
            asked = self._asked = Asked(self.request, conversation)
        return asked

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


_SOURCE: Final = itemgetter(0)  # a capture's source, read in C: counting 10,000 costs what reading 1,000 would


class Journal:
    """Safe to use from any thread: the proxy's doors add, the control API reads. Adding is one append to a list
    (atomic): no lock on the request's path. The journal's numbers are positions in that list, counted from the
    captures let go at its head (`_offset`), which only the lock's holder lets go; readers take another of
    their own while they make entries, so a long read never holds up a request.

    The newest `capacity` captures are the ones kept; the older ones are let go in batches, an eighth of
    `capacity` at a time (a list's head costs as much to cut by one as by many), so up to that many more are
    held until then, already counted as dropped and never read."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"a journal keeps at least one exchange, not {capacity}")
        self.capacity = capacity
        self._limit = capacity + max(1, capacity // 8)  # more than this many held: the oldest are let go
        self._captures: list[Capture] = []  # never replaced: a door may be appending to it
        self._lock = threading.Lock()  # letting captures go, and any look at the captures and the numbers
        self._added = threading.Condition(self._lock)  # what a watcher (`wait`) sleeps on
        self._watchers = 0  # how many sleep on it now: with none, adding notifies nobody
        self._offset = 0  # captures let go from the list's head: dropped or cleared
        self._cleared = 0
        self._counted: Counter[Source] = Counter()  # by who answered, those numbered up to `_counted_to`
        self._counted_to = 0
        self._reading = threading.Lock()  # making entries, and forgetting those of dropped captures
        self._entries: dict[int, Entry] = {}  # made, by number
        self._recent = Recent()  # the exchanges read whole last
        self._forgotten = 0  # every entry numbered up to this one is out of `_entries`

    def add(self, capture: Capture) -> None:
        """Keep an exchange (numbered in the order added: its number is its id), the oldest dropped when full."""
        captures = self._captures
        captures.append(capture)
        if len(captures) > self._limit:
            self._let_go(len(captures) - self.capacity)
        if self._watchers:  # read unlocked: a watcher counts itself before it looks, so it sees this capture
            with self._added:
                self._added.notify_all()

    def wait(self, after: int, timeout: float) -> int:
        """Sleep until an entry numbered after `after` is added, or `timeout` seconds pass; the newest number.
        For a reader that pushes what is new (the control API's event stream) without polling, and without
        the proxy's requests doing more than a notify while it sleeps."""
        with self._added:
            self._watchers += 1  # before looking: an add that finds no watcher appended before this look
            try:
                if self._offset + len(self._captures) <= after:
                    self._added.wait(timeout)
            finally:
                self._watchers -= 1
            return self._offset + len(self._captures)

    def read(self, query: Query = Query()) -> list[Entry]:
        captures, first, oldest = self._kept(query.since)
        with self._reading:
            self._forget(oldest)
            if query.limit is None:
                return [entry for entry in self._made(captures, first) if query.matches(entry)]
            if query.limit <= 0:
                return []
            newest = (entry for entry in self._made(captures, first, newest=True) if query.matches(entry))
            return list(islice(newest, query.limit))[::-1]

    def get(self, seq: int) -> Entry | None:
        """One entry by its number; None when it never was, or was dropped."""
        with self._lock:
            captures = self._captures
            held = len(captures)
            first = self._offset + max(0, held - self.capacity) + 1
            if not first <= seq <= self._offset + held:
                return None
            capture = captures[seq - self._offset - 1]
        with self._reading:
            self._forget(first)
            return self._entry(seq, capture)

    def clear(self) -> int:
        """Forget every entry (numbering goes on, so a reader's `since` stays meaningful); how many there were."""
        with self._reading, self._lock:
            held = len(self._captures)
            cleared = min(held, self.capacity)
            self._cut(held)
            self._cleared += cleared
            self._entries.clear()
            self._recent.clear()
            self._forgotten = self._offset
        return cleared

    @property
    def last(self) -> int:
        """The number of the newest entry ever added (0: none yet)."""
        with self._lock:
            return self._offset + len(self._captures)

    @property
    def dropped(self) -> int:
        """Entries pushed out because the journal was full."""
        with self._lock:
            return self._offset + len(self._captures) - self._cleared - min(len(self._captures), self.capacity)

    @property
    def kept(self) -> int:
        return min(len(self._captures), self.capacity)

    def counts(self) -> dict[Source, int]:
        """Exchanges seen since the start, by who answered (dropped and cleared ones included)."""
        with self._lock:
            captures = self._captures
            held = len(captures)  # an append beside this lands after it, counted next time
            self._count(islice(captures, self._counted_to - self._offset, held), self._offset + held)
            counts = self._counted.copy()
        return {source: count for source, count in counts.items() if count}

    def _kept(self, since: int = 0) -> tuple[list[Capture], int, int]:
        """The captures kept numbered after `since`, oldest first, the number of the first of them, and the number
        of the first kept. Only those are copied: the event stream reads what came since its last read, a few
        entries of a journal of thousands, several times a second."""
        with self._lock:
            held = len(self._captures)
            oldest = self._offset + max(0, held - self.capacity) + 1
            first = max(oldest, since + 1)
            captures = self._captures[first - self._offset - 1 : held]  # a copy, taken whole: appends go on beside it
            return captures, first, oldest

    def _let_go(self, count: int) -> None:
        """Let the oldest `count` captures go (fewer if another thread let some go meanwhile)."""
        with self._lock:
            self._cut(min(count, len(self._captures) - self.capacity))

    def _cut(self, count: int) -> None:
        """Under the lock: the oldest `count` captures go, counted by who answered."""
        if count > 0:
            captures = self._captures
            self._count(islice(captures, max(0, self._counted_to - self._offset), count), self._offset + count)
            del captures[:count]  # one step: an append beside it lands after what is left
            self._offset += count

    def _count(self, captures: Iterable[Capture], to: int) -> None:
        """Under the lock: count the captures numbered after `_counted_to` up to `to` (each counted once: when the
        counts are asked for, or when it is let go uncounted), so asking again counts only what came since."""
        if to > self._counted_to:
            self._counted.update(map(_SOURCE, captures))
            self._counted_to = to

    def _made(self, captures: list[Capture], first: int, newest: bool = False) -> Iterator[Entry]:
        """The entries of `captures` (numbered from `first`), oldest first, or newest first."""
        positions = range(len(captures) - 1, -1, -1) if newest else range(len(captures))
        for position in positions:
            yield self._entry(first + position, captures[position])

    def _entry(self, seq: int, capture: Capture) -> Entry:
        entry = self._entries.get(seq)
        if entry is None:
            entry = self._entries[seq] = Entry(seq, capture, self._recent)
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
