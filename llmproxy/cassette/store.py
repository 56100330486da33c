"""Recording into a cassette: `CassetteWriter` (durable as it goes, atomic at the end) and `load_cassette`.

`open` claims the cassette's journal (the lock: `journal.py`) before it reads or writes anything else.
`add` only queues the captured exchange for a background thread (`llmproxy record` runs the writer in a
process of its own, `writer_process.py`, which calls `write` itself). Each exchange is redacted and
converted, shares its history with earlier requests, and is appended to the journal (one write: a killed
process keeps it) and to the new cassette being written beside the old one (`PendingCassette`), so no
exchange stays in memory. `start` says the run began cleanly (the proxy listens, the command runs). `close`
finishes the new cassette and puts it in place atomically, then deletes the journal — unless the run never
started and recorded nothing: then the cassette stays byte for byte as it was. Recording into an existing
cassette appends to it; with `rewrite` the new cassette starts empty and replaces the old one, from the
moment the run starts (the journal says so, so a killed rewrite still loads as the new recording) — before
that, the old cassette is untouched. A `pending` recording appends the same way, but only from `start` on:
the pytest plugin starts a test's recording once the test is over and its recording whole, so a test killed
half-way, or whose upstream failed, leaves its cassette as it was.

A request the upstream never answered whole (`unanswered.py`) is not recorded unless asked (`keep_unanswered`):
it is counted and named in the summary, and a run whose upstream answered nothing at all leaves the cassette
as it was. What a recording that died left beside the cassette — its journal, its temporary file — is settled
by `open`, which recovers or discards the journal and says so (`leftovers.py`).
"""

import contextlib
import gc
import logging
import queue
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from llmproxy.cassette.audit import RecordingAudit
from llmproxy.cassette.background import BackgroundLinks
from llmproxy.cassette.bodies import Bodies
from llmproxy.cassette.convert import request_line, to_exchange, url
from llmproxy.cassette.files import (
    JOURNAL_VERSION,
    PENDING,
    STARTED,
    PendingCassette,
    encode_cassette,
    read_exchanges,
    write_atomic,
)
from llmproxy.cassette.history import HistoryIndex, inflate
from llmproxy.cassette.journal import Journal, this_process
from llmproxy.cassette.leftovers import Leftover, reading, remove_dead_temporaries, say
from llmproxy.cassette.model import VERSION, Cassette, Exchange, JsonBody, Places, Request, Timings, build, dump
from llmproxy.cassette.neutral import here, mentions
from llmproxy.cassette.parts import Compactor, compacted
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_capture import cut
from llmproxy.cassette.unanswered import unanswered
from llmproxy.errors import CassetteError
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.audit import DecodeTally
from llmproxy.words import plural

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class RecordSummary:
    """What one recording session added, for the CLI's closing line."""

    path: Path
    exchanges: int = 0
    by_provider: Counter[str] = field(default_factory=Counter)
    streamed: int = 0
    failed: int = 0  # no response: the upstream or the connection failed
    error_statuses: int = 0  # answered with a status ≥ 400
    websocket: int = 0  # exchanges of WebSocket messages
    untouched: bool = False  # the run never started: the cassette was left as it was
    decoding: DecodeTally = field(default_factory=DecodeTally)  # what llmproxy's codecs could not read
    unanswered: Counter[str] = field(default_factory=Counter)  # "POST https://…: connection refused" → how often
    existed: bool = True  # whether the cassette was there when the recording closed

    @property
    def unreachable(self) -> bool:
        """Nothing was recorded, and not for want of requests: the upstream answered none of them."""
        return not self.exchanges and bool(self.unanswered)

    def __str__(self) -> str:
        if self.untouched:
            return f"the run did not start: {self.path} is as it was"
        if self.unreachable:
            fate = "is as it was" if self.existed else "is not written"
            asked = plural(self.unanswered.total(), "request")
            line = f"recorded nothing to {self.path}: the upstream answered none of {asked}; {self.path} {fate}"
            return "\n".join([line, *self._unanswered_lines()])
        if not self.exchanges:
            return "\n".join([f"recorded no exchanges to {self.path}", *self._unanswered_lines()])
        providers = ", ".join(f"{name} {count}" for name, count in sorted(self.by_provider.items()))
        parts = [providers, f"{self.streamed} streamed, {self.exchanges - self.streamed} not"]
        if self.websocket:
            parts.append(f"{self.websocket} over WebSocket")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.error_statuses:
            parts.append(plural(self.error_statuses, "error status", "error statuses"))
        line = f"recorded {plural(self.exchanges, 'exchange')} to {self.path} ({'; '.join(parts)})"
        return "\n".join([line, *self._unanswered_lines(), *self.decoding.lines()])

    def _unanswered_lines(self) -> list[str]:
        if not self.unanswered:
            return []
        asked = plural(self.unanswered.total(), "request")
        lines = [f"not recorded: {asked} the upstream never answered (--record-unanswered records them):"]
        return lines + [f"  {what}" + (f" ({n} times)" if n > 1 else "") for what, n in self.unanswered.items()]

    def count(self, exchange: Exchange) -> None:
        self.exchanges += 1
        self.by_provider[exchange.provider or "other"] += 1
        self.streamed += exchange.streaming
        self.failed += exchange.response is None
        self.error_statuses += exchange.response is not None and exchange.response.status >= 400
        self.websocket += exchange.websocket is not None


def load_cassette(path: Path) -> Cassette:
    """A cassette with every history rebuilt, a leftover journal merged (and said so: `leftovers.reading`).
    Raises CassetteError saying which file, exchange and field is wrong."""
    reading(path)
    with gc_paused():
        try:
            exchanges = inflate(read_exchanges(path))
        except ValueError as exc:
            raise CassetteError(f"{path}: {exc}") from None
        return Cassette(llmproxy_cassette=VERSION, exchanges=exchanges)


def compact_cassette(path: Path) -> tuple[int, int]:
    """Write a cassette again with its shared parts stored once (`parts.py`), as a recording of it would now: in
    place, atomically, holding its journal's lock so that no recording writes it meanwhile. Returns its size
    before and after (the same when it was compact already: then it is not written). Raises CassetteError: no
    such cassette, a recording holds it or one that died left its journal (a recording or replay of it settles
    that first), or it cannot be read or written."""
    path = Path(path)
    if not path.is_file():
        raise CassetteError(f"{path}: no such cassette")
    journal = Journal.claim(path)
    stale = journal.stale
    try:
        if stale:
            raise CassetteError(f"{path}: a recording that died left {journal.path.name}: record or replay it first")
        before = path.stat().st_size
        exchanges = read_exchanges(path)
        try:
            inflate(exchanges)  # every shared history resolves: nothing is written from a cassette that is wrong
        except ValueError as exc:
            raise CassetteError(f"{path}: {exc}") from None
        data = encode_cassette(list(compacted(dump(exchange) for exchange in exchanges)))
        if data != path.read_bytes():
            write_atomic(path, data)
        return before, len(data)
    finally:
        journal.release(remove=not stale)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a cassette's objects are built: they all live on, and the
    collector's passes over them cost a third of loading a 10,000-exchange cassette."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_START = object()  # queued by `start`: the writer thread marks the journal in order with the exchanges


class CassetteWriter:
    def __init__(
        self,
        path: Path,
        redactor: Redactor,
        existing: list[Exchange],
        journal: Journal,
        header: dict[str, Any],
        pending: PendingCassette,
        compactor: Compactor,
        keep_unanswered: bool = False,
    ) -> None:
        """Use `open`."""
        self.path = path
        self._compactor = compactor  # it compacted `existing` into `pending`: what follows them shares their parts
        self._redactor = redactor
        self._keep_unanswered = keep_unanswered
        self._pending = pending
        self._lost: str | None = None  # why an exchange could not be written to `pending`
        self._index = HistoryIndex()
        self._places = here()  # the client's: the command llmproxy runs inherits them (a writer process too)
        for exchange in inflate(existing):
            if isinstance(exchange.request.body, JsonBody):
                self._index.observe(exchange.id, exchange.request.body.json_)
        self._next_id = max((exchange.id for exchange in existing), default=0) + 1
        self._background = BackgroundLinks()  # a Responses background run's polls name their create
        for exchange in existing:
            self._background.link(exchange)
        self._connections: dict[int, int] = {}  # a recording's WebSocket connection → its first exchange's id
        self._journal = journal
        self._header = header
        self._journal_failed = False
        self._summary = RecordSummary(path)
        self._audits = RecordingAudit(redactor)
        self._queue: queue.SimpleQueue[RawExchange | object | None] = queue.SimpleQueue()
        self._closed = False
        self._started = False
        self._thread = threading.Thread(target=self._run, name="llmproxy-cassette-writer", daemon=True)
        self._thread.start()

    @classmethod
    def open(
        cls,
        path: Path,
        redactor: Redactor,
        *,
        rewrite: bool = False,
        pending: bool = False,
        owner: str | None = None,
        keep_unanswered: bool = False,
    ) -> "CassetteWriter":
        """Start recording into `path` (its directories are made), keeping what it holds, or with `rewrite` to
        replace it once `start` is called; with `pending`, what it records counts only once `start` is called
        (closing before leaves the cassette as it was). `owner` names this recording to a second one (default:
        this process); `keep_unanswered` records requests the upstream never answered whole too. A journal and
        temporary files a recording that died left are settled first, and said so. Raises CassetteError, before
        anything is recorded, when the cassette cannot be written, another recording holds it, or what is there
        cannot be read."""
        path = Path(path)
        if path.is_dir():
            raise CassetteError(f"cannot record to {path}: it is a directory")
        if path.parent.exists() and not path.parent.is_dir():
            raise CassetteError(f"cannot record to {path}: {path.parent} is not a directory")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CassetteError(
                f"cannot record to {path}: cannot create {path.parent}: {exc.strerror or exc}"
            ) from None
        journal = Journal.claim(path)  # the lock, before anything is read or written
        created = not journal.stale
        try:
            leftover = Leftover.read(journal.path) if journal.stale else None  # a recorder that died left it
            removed = remove_dead_temporaries(path)
            existing: list[Exchange] = []
            recovering = leftover is not None and leftover.counts  # else it is discarded: it never counted
            if recovering or (path.exists() and not rewrite):
                existing = read_exchanges(path)
                load_cassette(path)  # every shared history must resolve before appending to it
                if recovering:  # its exchanges join the cassette now
                    write_atomic(path, encode_cassette(list(compacted(dump(exchange) for exchange in existing))))
            header: dict[str, Any] = {"llmproxy_journal": JOURNAL_VERSION, "owner": owner or this_process()}
            if rewrite:
                header["rewrite"] = PENDING
                existing = []
            elif pending:
                header["append"] = PENDING
            journal.begin(header)
            compactor = Compactor()
            written = PendingCassette(path, (compactor.compact(dump(exchange)) for exchange in existing))
        except OSError as exc:
            journal.release(remove=created)
            raise CassetteError(f"cannot record to {path}: {exc.strerror or exc}") from None
        except BaseException:
            journal.release(remove=created)
            raise
        if leftover is not None:
            say(leftover.recovered() if recovering else leftover.discarded(), removed)
        elif removed:
            say(f"{path}: removed what a writer that is gone left", removed)
        return cls(path, redactor, existing, journal, header, written, compactor, keep_unanswered)

    def start(self) -> None:
        """The run began cleanly: from now on the recording counts (with `rewrite`, it replaces the cassette)."""
        if not self._started and not self._closed:
            self._started = True
            self._queue.put(_START)

    def add(self, exchange: RawExchange) -> None:
        """Queue a finished exchange; returns at once (the proxy's event loop must not wait on disk)."""
        if self._closed:
            raise CassetteError(f"{self.path}: the recording is closed")
        self._queue.put(exchange)

    def put(self, exchange: RawExchange) -> None:
        """`add`, as the recorder hands exchanges over (in-process, the queue has no bound to wait for)."""
        self.add(exchange)

    def write(self, exchange: RawExchange) -> None:
        """Record an exchange now, on the caller's thread (the writer process: its pipe is the queue)."""
        try:
            exchange, warning = cut(exchange)  # a stream handed over as it arrived
            if warning:
                logger.warning("%s: %s", request_line(exchange.request, self._redactor), warning)
            if not self._keep_unanswered and (why := unanswered(exchange)) is not None:
                self._not_recorded(exchange, why)
                return
            self._record(exchange)
        except Exception:  # one exchange never costs the others
            logger.exception("%s: could not record an exchange", self.path)

    def close(self) -> RecordSummary:
        """Finish every queued exchange, put the new cassette in place atomically and delete the journal. A run
        that never started and recorded nothing (or a rewrite or pending recording that never started) leaves
        the cassette as it was. Raises CassetteError when the cassette cannot be written: the journal then keeps
        the recording."""
        if self._closed:
            return self._summary
        self._closed = True
        self._queue.put(None)
        self._thread.join()
        if not self._started and (self._pending_key is not None or not self._summary.exchanges):
            self._pending.abort()
            self._journal.release(remove=True)
            self._summary.untouched = True
            return self._summary
        if self._summary.unreachable:  # a recording of nothing but an outage is no cassette
            self._pending.abort()
            self._journal.release(remove=True)
            self._summary.existed = self.path.exists()
            return self._summary
        with contextlib.suppress(OSError):  # the cassette is written next: the journal is the fallback
            self._journal.sync()
        try:
            if self._lost is not None:  # an exchange the new cassette lacks is in the journal: keep that instead
                self._pending.abort()
                raise CassetteError(f"cannot write {self.path}: {self._lost}")
            self._pending.commit()
        except CassetteError as exc:
            self._journal.release(remove=False)
            kept = "what could be journalled before that" if self._journal_failed else "the recording"
            raise CassetteError(f"{exc}; {self._journal.path.name} keeps {kept}") from None
        self._journal.release(remove=True)
        return self._summary

    def _run(self) -> None:
        while (raw := self._queue.get()) is not None:
            if raw is _START:
                self.mark_started()
            else:
                assert isinstance(raw, RawExchange)
                self.write(raw)

    @property
    def _pending_key(self) -> str | None:
        """The journal header's field that says the recording counts only from `start` on, if it has one."""
        return next((key for key in ("rewrite", "append") if key in self._header), None)

    def mark_started(self) -> None:
        """In order with the exchanges (`start` queues it): a rewrite's journal says from now on that it
        replaces the cassette, a pending one's that it is appended to it."""
        self._started = True
        key = self._pending_key
        if key is None or self._header[key] != PENDING:
            return
        self._header[key] = STARTED
        try:
            self._journal.rewrite_header(self._header)
        except OSError as exc:
            self._journal_failed = True
            logger.error("%s: could not write the journal: %s", self.path, exc.strerror or exc)

    def _audit(self, raw: RawExchange, exchange: Exchange, bodies: Bodies) -> None:
        """Whether llmproxy's codecs read it: counted for the summary, never in the way of the recording."""
        exchange_id = exchange.id
        try:
            result = self._audits.audit(exchange_id, raw, exchange.request.extends, bodies)
            self._summary.decoding.add(result, f"exchange {exchange_id}")
        except Exception:
            logger.exception("%s: could not check exchange %d against the codecs", self.path, exchange_id)

    def _not_recorded(self, raw: RawExchange, why: str) -> None:
        """A request the upstream never answered whole: counted for the summary, and said the first time."""
        what = f"{request_line(raw.request, self._redactor)}: {self._redactor.text(why)}"
        first = what not in self._summary.unanswered
        self._summary.unanswered[what] += 1
        if first:
            logger.warning("not recorded: %s (%s)", what, self._redactor.text(raw.error or ""))

    def _record(self, raw: RawExchange) -> None:
        exchange_id = self._next_id
        self._next_id += 1
        connection = None if raw.websocket is None else self._connections.setdefault(raw.websocket, exchange_id)
        bodies = Bodies.of(raw)  # parsed once: for the conversion and the audit
        try:
            places = self._places_in(raw)
            exchange = to_exchange(raw, exchange_id, self._redactor, self._index, connection, places, bodies)
        except Exception as exc:
            logger.warning("%s: recording only the request line of an exchange: %s", self.path, exc)
            exchange = self._bare(raw, exchange_id, exc)
        exchange = self._background.link(exchange)
        self._audit(raw, exchange, bodies)
        stored = self._compactor.compact(dump(exchange))
        self._summary.count(exchange)
        if not self._journal_failed:
            try:
                self._journal.append(orjson.dumps(stored) + b"\n")
            except OSError as exc:  # still written to the new cassette
                self._journal_failed = True
                logger.error("%s: could not append to the journal: %s", self.path, exc.strerror or exc)
        try:
            self._pending.append(stored)
        except OSError as exc:  # still in the journal, which the next recording or replay reads
            self._lost = exc.strerror or str(exc)
            logger.error("%s: could not write the exchange to the new cassette: %s", self.path, exc.strerror or exc)

    def _places_in(self, raw: RawExchange) -> Places | None:
        """The client's places, for an exchange whose request holds them (replay neutralises them there)."""
        places = self._places
        return places if places is not None and mentions(raw.request.body, places) else None

    def _bare(self, raw: RawExchange, exchange_id: int, exc: Exception) -> Exchange:
        request = raw.request
        return build(
            Exchange,
            id=exchange_id,
            request=build(
                Request,
                method=request.method,
                url=url(request, self._redactor),
                http_version=request.http_version,
                headers=[],
            ),
            error=raw.error,
            timings=build(Timings, started_at=raw.started_at),
            notes=[f"could not be converted ({exc!r}): only the request line was kept"],
        )
