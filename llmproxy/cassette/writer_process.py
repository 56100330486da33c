"""A `CassetteWriter` in a process of its own, for the proxy.

Redacting, converting and sharing history cost CPU per exchange; in the proxy's process they would hold the
GIL the proxy's event loop needs, so recording would slow the traffic it records. Here the proxy only
pickles each captured exchange down a pipe, and the child does the rest on another core.

The child owns the journal and the cassette. If the proxy's process dies (kill -9), the child reads every
exchange already sent, then finalises the cassette as `close` would: nothing finished is lost.
"""

import logging
import multiprocessing
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from llmproxy.cassette.capture import RawExchange
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, RecordSummary
from llmproxy.errors import CassetteError

logger = logging.getLogger(__name__)


class WriterProcess:
    """`open`, `add`, `close`: the same contract as `CassetteWriter`."""

    def __init__(self, path: Path, process: multiprocessing.process.BaseProcess, pipe: Connection) -> None:
        """Use `open`."""
        self.path = path
        self._process = process
        self._pipe = pipe
        self._lock = threading.Lock()  # `add` may come from several threads (tests drive it so)
        self._closed = False

    @classmethod
    def open(cls, path: Path, redactor: Redactor) -> "WriterProcess":
        """Start the child and wait until it holds the cassette. Raises CassetteError as `CassetteWriter.open`
        does, before anything is recorded."""
        context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_serve,
            args=(Path(path), redactor, theirs, logging.getLogger().getEffectiveLevel()),
            name="llmproxy-cassette-writer",
            daemon=False,  # it must outlive a killed parent long enough to finalise the cassette
        )
        process.start()
        theirs.close()
        try:
            ready = ours.recv()
        except EOFError:
            process.join()
            raise CassetteError(f"cannot record to {path}: the writer process exited ({process.exitcode})") from None
        if ready is not None:
            process.join()
            raise CassetteError(ready)
        return cls(Path(path), process, ours)

    def add(self, exchange: RawExchange) -> None:
        with self._lock:
            if self._closed:
                raise CassetteError(f"{self.path}: the recording is closed")
            self._pipe.send(exchange)

    def close(self) -> RecordSummary:
        """Let the child finish every exchange and write the cassette; its summary."""
        with self._lock:
            self._closed = True
            self._pipe.send(None)
            summary: RecordSummary = self._pipe.recv()
        self._process.join()
        return summary


def _serve(path: Path, redactor: Redactor, pipe: Connection, log_level: int) -> None:
    logging.basicConfig(level=log_level, format="llmproxy: %(levelname)s %(name)s: %(message)s")
    try:
        writer = CassetteWriter.open(path, redactor)
    except CassetteError as exc:
        pipe.send(str(exc))
        return
    pipe.send(None)
    parent_gone = False
    while True:
        try:
            exchange = pipe.recv()
        except EOFError:  # the proxy's process died: keep what it sent
            parent_gone = True
            break
        if exchange is None:
            break
        writer.add(exchange)
    summary = writer.close()
    if parent_gone:
        logger.warning("the recording process ended without closing the cassette: %s", summary)
    else:
        pipe.send(summary)
