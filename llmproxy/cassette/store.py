"""Recording into a cassette: `CassetteWriter` (durable as it goes, atomic at the end) and `load_cassette`.

`add` only queues the captured exchange for a background thread (`llmproxy record` runs the writer in a
process of its own, `writer_process.py`, which calls `write` itself). Each exchange is redacted and
converted, shares its history with earlier requests, and is appended to the journal (write + flush: a
killed process keeps it) and to the new cassette being written beside the old one (`PendingCassette`), so
no exchange stays in memory. `close` finishes the new cassette and puts it in place atomically, then deletes
the journal. Recording into an existing cassette appends to it.
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
from typing import BinaryIO

import orjson

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from llmproxy.cassette.capture import RawExchange
from llmproxy.cassette.convert import to_exchange, url
from llmproxy.cassette.files import (
    JOURNAL_HEADER,
    PendingCassette,
    encode_cassette,
    journal_path,
    read_exchanges,
    write_atomic,
)
from llmproxy.cassette.history import HistoryIndex, inflate
from llmproxy.cassette.model import VERSION, Cassette, Exchange, JsonBody, Request, Timings, build, dump
from llmproxy.cassette.redact import Redactor
from llmproxy.errors import CassetteError

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

    def __str__(self) -> str:
        if not self.exchanges:
            return f"recorded no exchanges to {self.path}"
        providers = ", ".join(f"{name} {count}" for name, count in sorted(self.by_provider.items()))
        parts = [providers, f"{self.streamed} streamed, {self.exchanges - self.streamed} not"]
        if self.websocket:
            parts.append(f"{self.websocket} over WebSocket")
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.error_statuses:
            parts.append(f"{self.error_statuses} error statuses")
        plural = "s" if self.exchanges != 1 else ""
        return f"recorded {self.exchanges} exchange{plural} to {self.path} ({'; '.join(parts)})"

    def count(self, exchange: Exchange) -> None:
        self.exchanges += 1
        self.by_provider[exchange.provider or "other"] += 1
        self.streamed += exchange.streaming
        self.failed += exchange.response is None
        self.error_statuses += exchange.response is not None and exchange.response.status >= 400
        self.websocket += exchange.websocket is not None


def load_cassette(path: Path) -> Cassette:
    """A cassette with every history rebuilt, a leftover journal merged. Raises CassetteError saying which
    file, exchange and field is wrong."""
    with gc_paused():
        try:
            exchanges = inflate(read_exchanges(path))
        except ValueError as exc:
            raise CassetteError(f"{path}: {exc}") from None
        return Cassette(llmproxy_cassette=VERSION, exchanges=exchanges)


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


def _lock(handle: BinaryIO) -> None:
    """Hold an exclusive lock on the journal while recording, so another recorder can tell a live journal
    from one a killed recorder left (the lock dies with its process). Without fcntl (Windows): no check."""
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def _locked(journal: Path) -> bool:
    try:
        with journal.open("rb") as handle:
            _lock(handle)
    except BlockingIOError:
        return True
    except OSError:
        return False  # unreadable: reading it will say why
    return False


class CassetteWriter:
    def __init__(
        self, path: Path, redactor: Redactor, existing: list[Exchange], journal: BinaryIO, pending: PendingCassette
    ) -> None:
        """Use `open`."""
        self.path = path
        self._redactor = redactor
        self._pending = pending
        self._lost = False  # an exchange could not be written to `pending`
        self._index = HistoryIndex()
        for exchange in inflate(existing):
            if isinstance(exchange.request.body, JsonBody):
                self._index.observe(exchange.id, exchange.request.body.json_)
        self._next_id = max((exchange.id for exchange in existing), default=0) + 1
        self._connections: dict[int, int] = {}  # a recording's WebSocket connection → its first exchange's id
        self._journal = journal
        self._summary = RecordSummary(path)
        self._queue: queue.SimpleQueue[RawExchange | None] = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="llmproxy-cassette-writer", daemon=True)
        self._thread.start()

    @classmethod
    def open(cls, path: Path, redactor: Redactor) -> "CassetteWriter":
        """Start recording into `path` (its directories are made), keeping what it holds. Raises
        CassetteError, before anything is recorded, when the cassette cannot be written or what is there cannot
        be read."""
        path = Path(path)
        journal = journal_path(path)
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
        existing: list[Exchange] = []
        if journal.exists() and _locked(journal):
            raise CassetteError(f"cannot record to {path}: another recording is writing {journal}")
        if path.exists() or journal.exists():
            existing = read_exchanges(path)
            load_cassette(path)  # every shared history must resolve before appending to it
            if journal.exists():  # a recorder was killed: its exchanges join the cassette now
                logger.warning("%s: recovering %s left by an interrupted recording", path, journal.name)
                write_atomic(path, encode_cassette([dump(exchange) for exchange in existing]))
                journal.unlink()
        try:
            handle = journal.open("xb")
            _lock(handle)
            handle.write(orjson.dumps(JOURNAL_HEADER) + b"\n")
            handle.flush()
        except FileExistsError:
            raise CassetteError(f"cannot record to {path}: another recording is writing {journal}") from None
        except OSError as exc:
            raise CassetteError(f"cannot record to {path}: cannot create {journal}: {exc.strerror or exc}") from None
        try:
            pending = PendingCassette(path, (dump(exchange) for exchange in existing))
        except OSError as exc:
            handle.close()
            journal.unlink(missing_ok=True)
            raise CassetteError(f"cannot record to {path}: {exc.strerror or exc}") from None
        return cls(path, redactor, existing, handle, pending)

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
            self._record(exchange)
        except Exception:  # one exchange never costs the others
            logger.exception("%s: could not record an exchange", self.path)

    def close(self) -> RecordSummary:
        """Finish every queued exchange, put the new cassette in place atomically and delete the journal."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join()
            self._journal.close()
            if self._lost:  # an exchange the new cassette lacks is still in the journal: keep that instead
                self._pending.abort()
                raise CassetteError(f"{self.path}: could not be written whole; {self._journal.name} holds everything")
            self._pending.commit()
            journal_path(self.path).unlink(missing_ok=True)
        return self._summary

    def _run(self) -> None:
        while (raw := self._queue.get()) is not None:
            self.write(raw)

    def _record(self, raw: RawExchange) -> None:
        exchange_id = self._next_id
        self._next_id += 1
        connection = None if raw.websocket is None else self._connections.setdefault(raw.websocket, exchange_id)
        try:
            exchange = to_exchange(raw, exchange_id, self._redactor, self._index, connection)
        except Exception as exc:
            logger.warning("%s: recording only the request line of an exchange: %s", self.path, exc)
            exchange = self._bare(raw, exchange_id, exc)
        stored = dump(exchange)
        self._summary.count(exchange)
        try:
            self._journal.write(orjson.dumps(stored) + b"\n")
            self._journal.flush()
        except OSError as exc:  # still written to the new cassette
            logger.error("%s: could not append to the journal: %s", self.path, exc)
        try:
            self._pending.append(stored)
        except OSError as exc:  # still in the journal, which the next recording or replay reads
            self._lost = True
            logger.error("%s: could not write the exchange to the new cassette: %s", self.path, exc)

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
