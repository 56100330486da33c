"""A `CassetteWriter` in a process of its own, for the proxy.

Redacting, converting and sharing history cost CPU per exchange; in the proxy's process they would hold the
GIL the proxy's event loop needs, so recording would slow the traffic it records. Here the proxy only
pickles each captured exchange down a pipe, and the child does the rest on another core.

The child owns the journal and the cassette. If the proxy's process dies (kill -9), the child reads every
exchange already sent, then finalises the cassette as `close` would: nothing finished is lost. It runs in a
process group of its own, so the Ctrl-C a terminal sends to llmproxy's group does not kill it mid-write:
llmproxy itself tells it when to finish.

The child is `python -m llmproxy.cassette.writer_process` talking over two pipes, not a multiprocessing
"spawn" child: spawn re-runs the parent's main script, which would break a user's unguarded script that
records in-process.
"""

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable
from multiprocessing.connection import Connection
from pathlib import Path

import llmproxy
from llmproxy import log_lines
from llmproxy.cassette import redacted_logs
from llmproxy.cassette.handover import Handover
from llmproxy.cassette.journal import this_process
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, RecordSummary
from llmproxy.errors import CassetteError
from llmproxy.model.exchange import RawExchange, wire_size
from llmproxy.providers.declared import Declaration, declared

logger = logging.getLogger(__name__)


QUEUE_BYTES = 16 * 1024 * 1024  # exchanges waiting for the writer, past which the proxy slows its clients
EVENT_BYTES = 4096
"""What one stream event weighs in the queue besides its bytes: the writer spends about as long on an event
(parsing, redacting and storing it, the decode audit) as on 4 KB of a body, so a queue of 2,000-event streams
drains as fast as one of 200 KB bodies (shutdown within its 2 s)."""
EXCHANGE_BYTES = 32 * 1024
"""What one exchange weighs in the queue besides its bytes and events: the writer's fixed work on each (about
0.4 ms, what 32 KB of a body costs it). Without it a queue of 1 KB exchanges, which the lean door forwards
faster than the writer writes them, held thousands, and shutdown waited seconds for them."""
_START = "start"  # down the pipe, in order with the exchanges: `CassetteWriter.start`


class WriterProcess:
    """`open`, `put` (or `add`), `close`: the same contract as `CassetteWriter`, with a bounded queue."""

    def __init__(
        self, path: Path, process: subprocess.Popen[bytes], to_child: Connection, from_child: Connection
    ) -> None:
        """Use `open`."""
        self.path = path
        self._process = process
        self._pipe = to_child
        self._replies = from_child
        self._closed = False
        # pickling and writing a 200 KB exchange to the pipe must not hold up the proxy's event loop
        self._queue: Handover[RawExchange | str] = Handover(
            QUEUE_BYTES,
            _size,
            f"{path}: the cassette writer is behind; slowing the clients until it catches up (nothing is dropped)",
        )
        self._sender = threading.Thread(target=self._send_all, name="llmproxy-cassette-sender", daemon=True)
        self._sender.start()

    @classmethod
    def open(
        cls,
        path: Path,
        redactor: Redactor,
        routes: tuple[Declaration, ...] = (),
        *,
        rewrite: bool = False,
        keep_unanswered: bool = False,
    ) -> "WriterProcess":
        """Start the child and wait until it holds the cassette. Raises CassetteError as `CassetteWriter.open`
        does, before anything is recorded. `routes`: the session's declared routes, which name the API and
        vendor of what is recorded there; `rewrite`, `keep_unanswered`: as `CassetteWriter.open`."""
        child_in, to_child = os.pipe()
        from_child, child_out = os.pipe()
        source = str(Path(llmproxy.__file__).resolve().parents[1])  # importable even from a source checkout
        environment = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}
        process = subprocess.Popen(
            [sys.executable, "-m", "llmproxy.cassette.writer_process", str(child_in), str(child_out)],
            pass_fds=(child_in, child_out),
            env=environment,
            process_group=0,
        )
        os.close(child_in)
        os.close(child_out)
        _widen(to_child)
        sender, replies = Connection(to_child, readable=False), Connection(from_child, writable=False)
        level = logging.getLogger().getEffectiveLevel()
        sender.send(
            (Path(path), redactor, (level, *log_lines.in_use()), routes, rewrite, keep_unanswered, this_process())
        )
        try:
            ready = replies.recv()
        except EOFError:
            process.wait()
            raise CassetteError(f"cannot record to {path}: the writer process exited ({process.returncode})") from None
        if ready is not None:
            process.wait()
            raise CassetteError(ready)
        return cls(Path(path), process, sender, replies)

    def put(self, exchange: RawExchange) -> Awaitable[None] | None:
        """Queue a finished exchange for the child: None when it is queued, or, while the queue is full, an
        awaitable to await before the flow goes on (back-pressure; see `Handover`)."""
        if self._closed:
            raise CassetteError(f"{self.path}: the recording is closed")
        return self._queue.put(exchange)

    def add(self, exchange: RawExchange) -> None:
        """Queue a finished exchange whatever the queue holds; returns at once."""
        if self._closed:
            raise CassetteError(f"{self.path}: the recording is closed")
        self._queue.add(exchange)

    def start(self) -> None:
        """As `CassetteWriter.start`: the run began cleanly."""
        if not self._closed:
            self._queue.add(_START)

    def close(self) -> RecordSummary:
        """Let the child finish every exchange and write the cassette; its summary. Raises CassetteError when
        the cassette could not be written."""
        if self._closed:
            raise CassetteError(f"{self.path}: the recording is closed")
        self._closed = True
        self._queue.add(None)
        self._sender.join()
        try:
            reply: RecordSummary | str = self._replies.recv()
        except EOFError:
            raise CassetteError(f"{self.path}: the writer process died; its journal holds what it wrote") from None
        finally:
            self._process.wait()
            self._pipe.close()
            self._replies.close()
        if isinstance(reply, str):
            raise CassetteError(reply)
        return reply

    def _send_all(self) -> None:
        while True:
            exchange, size = self._queue.get()
            if exchange is None:
                break
            try:
                self._pipe.send(exchange)
            except OSError as exc:  # the child is gone: nothing more can be recorded
                logger.error("%s: the writer process is gone (%s): exchanges are no longer recorded", self.path, exc)
                self._queue.limit = 1 << 62  # never make a client wait for it
                self._queue.sent(size)
                return
            self._queue.sent(size)
        self._pipe.send(None)


def _serve(requests: Connection, replies: Connection) -> None:
    path, redactor, (log_level, command, debug), routes, rewrite, keep_unanswered, owner = requests.recv()
    redacted_logs.install()
    log_lines.to_stderr(command, log_level, debug)
    with declared(routes):
        try:
            writer = CassetteWriter.open(path, redactor, rewrite=rewrite, owner=owner, keep_unanswered=keep_unanswered)
        except CassetteError as exc:
            replies.send(str(exc))
            return
        _write(writer, requests, replies)


def _write(writer: CassetteWriter, requests: Connection, replies: Connection) -> None:
    replies.send(None)
    parent_gone = False
    while True:
        try:
            exchange = requests.recv()
        except EOFError:  # the proxy's process died: keep what it sent
            parent_gone = True
            break
        if exchange is None:
            break
        if exchange == _START:
            writer.mark_started()
        else:
            writer.write(exchange)  # here, not queued: the pipe fills while this is busy, so the proxy waits
    try:
        reply: RecordSummary | str = writer.close()
    except CassetteError as exc:
        reply = str(exc)
    if parent_gone:
        logger.warning("the recording process ended without closing the cassette: %s", reply)
    else:
        replies.send(reply)


def _size(item: RawExchange | str) -> int:
    """What an item weighs in the queue: about the writer's work on it, in bytes of body."""
    if not isinstance(item, RawExchange):
        return 0
    response = item.response
    if response is None:
        return EXCHANGE_BYTES + wire_size(item)
    events = len(response.pieces.data) if response.pieces is not None else len(response.events or ())
    return EXCHANGE_BYTES + wire_size(item) + EVENT_BYTES * events  # a stream's pieces: about as many as its events


def _widen(pipe: int) -> None:
    """A 1 MiB pipe buffer where Linux allows it: a large exchange then crosses in one write."""
    try:
        import fcntl

        fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):  # not Linux, or above the system's pipe-max-size
        pass


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False))
