"""The stdio MCP tap: between an agent and a stdio MCP server, it records each request and what the server
wrote until it answered (record), or answers from a cassette with no server at all (replay).

Both sides speak MCP's stdio framing: one JSON-RPC message a line. Recording, the tap passes every line on as
it came, in both directions, and only notes requests and what answers them; the server's requests to the
client (sampling, roots) and the client's answers pass through unrecorded. What would leave the agent waiting
forever or confuse its client is answered instead, with one line on stderr:

* a line from the server that is not a JSON-RPC message (a stray print) is not passed on;
* a server that exits, or whose stdout closes, leaves no request unanswered: each gets a JSON-RPC error
  saying so, and so does every request after it.

Replaying, a request is answered with what was recorded for the same method and params, its id made the
request's; a request nothing was recorded for gets a JSON-RPC error that explains the miss. Notifications are
taken and dropped, as the server did not answer them either. In a replay that records what it lacks
(`new_episodes`), the first request the recording lacks starts the server (`FallbackTap`).

A JSON-RPC batch (an array of requests, one line) is answered as the MCP version the server agreed to in
`initialize` says: with 2025-03-26 and older, an array of the answers (each request recorded, and replayed, as
its own exchange); from 2025-06-18 on, which took batches out, one JSON-RPC error from the tap itself.
"""

import contextlib
import logging
import queue
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any, Final, Protocol

import orjson

from llmproxy import jsonrpc
from llmproxy.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from llmproxy.mcp import protocol
from llmproxy.mcp.stdio_exchange import answered_as, raw_exchange
from llmproxy.model.exchange import RawExchange
from llmproxy.tool_protocols import NOT_RECORDED

logger = logging.getLogger(__name__)

SERVER_GONE: Final = -32000  # the implementation-defined server-error range: the tap's own errors
_EXIT_GRACE: Final = 5.0  # seconds a server has to exit once its stdin is closed
_ANSWER_GRACE: Final = 60.0  # seconds a server has to answer what was asked before the client's stdin closed


class Recorder(Protocol):
    """Where a recorded exchange goes: the cassette's writer, or the enclosing run's."""

    def add(self, exchange: RawExchange) -> None: ...


class Answerer(Protocol):
    """Replay: what the server wrote for a request (parsed lines, the answer last), or why nothing was
    recorded for it (a `str`: the miss explained)."""

    def answer(self, message: bytes) -> list[Any] | str: ...


@dataclass(slots=True)
class _Pending:
    message: bytes
    started_at: datetime
    started: float
    written: list[tuple[float, bytes]] = field(default_factory=list)


class _Output:
    """The agent's stdout, written one whole line at a time from either thread."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def write(self, line: bytes) -> None:
        with self._lock:
            self._stream.write(line if line.endswith(b"\n") else line + b"\n")
            self._stream.flush()


def _parsed(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("method"), str) and message.get("id") is not None


def _is_answer(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)


def _key(request_id: object) -> bytes:
    return orjson.dumps(request_id)


def _requests(message: Any) -> list[dict[str, Any]]:
    """The requests a line carries: itself, or a batch's (each answered, and recorded, on its own)."""
    return [each for each in (message if isinstance(message, list) else [message]) if _is_request(each)]


def _agreed(request: Any, answer: Any) -> str | None:
    """The MCP version a server agreed to in its answer to `initialize` `request`."""
    if not (isinstance(request, dict) and request.get("method") == "initialize" and isinstance(answer, dict)):
        return None
    result = answer.get("result")
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    return version if isinstance(version, str) else None


def _batches(version: str | None) -> bool:
    """Whether a batch may be sent: as MCP `version` says (2025-03-26 and older had them; 2025-06-18 took them
    out); before `initialize` has agreed on one, the server decides."""
    return version is None or version not in protocol.VERSIONS or protocol.batches(version)


def _no_batches(version: str | None) -> dict[str, Any]:
    return jsonrpc.error(None, INVALID_REQUEST, f"JSON-RPC batches are not part of MCP {version}")


class RecordingTap:
    """Records a running server's answers while passing every message on."""

    def __init__(self, name: str, command: Sequence[str], recorder: Recorder, output: IO[bytes]) -> None:
        self.name = name
        self.command = list(command)
        self.recorder = recorder
        self._output = _Output(output)
        self._pending: dict[bytes, _Pending] = {}
        self._lock = threading.Lock()
        self._gone: str | None = None  # why the server can answer no more
        self._process: subprocess.Popen[bytes] | None = None
        # handed to the recorder on a thread of its own: a slow recorder (the run's control API) never holds
        # up the server's next line
        self._recording: queue.SimpleQueue[RawExchange | None] = queue.SimpleQueue()
        self._own: dict[bytes, threading.Event] = {}  # the tap's own requests: their answers stay with it
        self.version: str | None = None  # the MCP version the server agreed to (None: not yet initialized)
        self._batched: list[list[bytes]] = []  # each batch passed on: its requests' keys

    def own(self, request_id: str) -> threading.Event:
        """Take the answer to request `request_id` for the tap itself (neither passed on nor recorded): the
        event is set when it has come."""
        event = threading.Event()
        with self._lock:
            self._own[_key(request_id)] = event
        return event

    def run(self, lines: Iterable[bytes]) -> int:
        """Start the server, pass `lines` (the agent's stdin) to it until they end, then wait for it; its exit
        status. Raises OSError when it cannot be started."""
        process = self._process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert process.stdin is not None
        assert process.stdout is not None
        reader = threading.Thread(target=self._read_server, args=(process.stdout,), name="mcp-tap-server", daemon=True)
        reader.start()
        recording = threading.Thread(target=self._hand_over, name="mcp-tap-recorder", daemon=True)
        recording.start()
        stdin = process.stdin
        for line in lines:
            if not line.strip():
                continue
            message = _parsed(line)
            if isinstance(message, list) and not _batches(self.version):
                self._output.write(orjson.dumps(_no_batches(self.version)))
                continue
            requests = _requests(message)
            if requests:
                with self._lock:
                    gone = self._gone
                    if gone is None:
                        now, at = time.perf_counter(), datetime.now(UTC)
                        for request in requests:  # a batch's each recorded as its own exchange
                            said = line.rstrip(b"\r\n") if request is message else orjson.dumps(request)
                            self._pending[_key(request["id"])] = _Pending(said, at, now)
                        if isinstance(message, list):  # those answered or refused are forgotten
                            self._batched = [keys for keys in self._batched if keys[0] in self._pending]
                            self._batched.append([_key(request["id"]) for request in requests])
                if gone is not None:
                    for request in requests:
                        self._output.write(orjson.dumps(jsonrpc.error(request["id"], SERVER_GONE, gone)))
                    continue
            try:
                stdin.write(line if line.endswith(b"\n") else line + b"\n")
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # it exited: the reader answers what is pending
        self._drain(process)
        with contextlib.suppress(OSError):
            stdin.close()
        try:
            status = process.wait(_EXIT_GRACE)
        except subprocess.TimeoutExpired:
            logger.warning("%s did not exit within %gs of its stdin closing: ended", self.name, _EXIT_GRACE)
            process.terminate()
            status = process.wait()
        reader.join()
        self._recording.put(None)
        recording.join()
        return status

    def _drain(self, process: "subprocess.Popen[bytes]") -> None:
        """Let the server answer what the client asked before its stdin closed (a client that writes its
        requests and closes at once: the server may still be starting), for `_ANSWER_GRACE` at most."""
        deadline = time.monotonic() + _ANSWER_GRACE
        while process.poll() is None and time.monotonic() < deadline:
            with self._lock:
                if not self._pending:
                    return
            time.sleep(0.02)

    def stop(self) -> None:
        """End the server (the agent went away without closing stdin)."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()

    def _read_server(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            stamp = time.perf_counter()
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue
            message = _parsed(line)
            if not isinstance(message, (dict, list)):
                shown = line[:80].decode("utf-8", "replace")
                logger.warning("%s wrote a line that is not JSON-RPC, not passed on: %r", self.name, shown)
                continue
            items = message if isinstance(message, list) else [message]  # a batch's answers: one line
            answered = []
            for item in items:
                pending = self._take(item, line if item is message else orjson.dumps(item), stamp)
                if pending is not None:
                    self._note_version(pending, item)
                    answered.append(pending)
            if answered and not isinstance(message, list) and self._answered_own(message):
                continue
            self._output.write(line)
            for pending in answered:
                self._record(pending, stamp)
        status = None
        if self._process is not None:
            # its stdout closes as it exits, the status just after; or it closed its stdout and lives on
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = self._process.wait(_EXIT_GRACE)
        ended = f"exited (status {status})" if status is not None else "closed its stdout"
        self._server_gone(f"the MCP server {self.name} {ended} before answering")

    def _take(self, message: Any, line: bytes, stamp: float) -> _Pending | None:
        """The request `message` answers, with what was written for it; a notification or a request of the
        server's is kept with the latest request still waiting, as written for it."""
        with self._lock:
            if _is_answer(message) and message.get("id") is None and "error" in message:
                self._refused_batch()  # a batch refused whole: one error, no id
                return None
            if _is_answer(message):
                pending = self._pending.pop(_key(message.get("id")), None)
            else:
                pending = None
                latest = next(reversed(self._pending.values()), None)
                if latest is not None:
                    latest.written.append(((stamp - latest.started) * 1000, line))
                return None
        if pending is not None:
            pending.written.append(((stamp - pending.started) * 1000, line))
        return pending

    def _refused_batch(self) -> None:
        """Forget the oldest batch whose requests all still wait: the server refused it whole (under the
        lock)."""
        for index, keys in enumerate(self._batched):
            if all(key in self._pending for key in keys):
                for key in keys:
                    del self._pending[key]
                del self._batched[index]
                return

    def _note_version(self, pending: _Pending, answer: Any) -> None:
        """The version the server agreed to, read from its answer to `initialize`: it says whether batches are."""
        if self.version is None and isinstance(answer, dict):
            version = _agreed(orjson.loads(pending.message), answer)
            if version is not None:
                self.version = version

    def _answered_own(self, message: Any) -> bool:
        with self._lock:
            event = self._own.pop(_key(message.get("id")), None)
        if event is not None:
            event.set()
        return event is not None

    def _record(self, pending: _Pending, stamp: float) -> None:
        total = (stamp - pending.started) * 1000
        self._recording.put(raw_exchange(self.name, pending.message, pending.written, pending.started_at, total))

    def _hand_over(self) -> None:
        while (exchange := self._recording.get()) is not None:
            try:
                self.recorder.add(exchange)
            except Exception as error:  # the recording is lost, never the session
                logger.warning("%s: an exchange could not be recorded: %s", self.name, error)

    def _server_gone(self, why: str) -> None:
        with self._lock:
            self._gone = why
            waiting = list(self._pending.items())
            self._pending.clear()
        if waiting:
            logger.warning("%s: %d request(s) left unanswered, answered with an error", why, len(waiting))
        for _, pending in waiting:
            request_id = orjson.loads(pending.message).get("id")
            self._output.write(orjson.dumps(jsonrpc.error(request_id, SERVER_GONE, why)))


class ReplayingTap:
    """Answers from a recording; no server runs."""

    def __init__(self, name: str, answerer: Answerer, output: IO[bytes]) -> None:
        self.name = name
        self.answerer = answerer
        self.answered = 0
        self.missed = 0
        self.version: str | None = None  # the MCP version the recording's server agreed to
        self._output = _Output(output)

    def run(self, lines: IO[bytes]) -> int:
        for line in lines:
            if line.strip():
                self.answer(line.rstrip(b"\r\n"))
        return 0

    def answer(self, line: bytes) -> None:
        message = _parsed(line)
        missed = self.answered_from_recording(line, message)
        if missed is not None:
            self.missed += 1
            logger.warning("%s: not recorded: %s", self.name, missed)
            self._output.write(orjson.dumps(jsonrpc.error(message["id"], NOT_RECORDED, f"llmproxy replay: {missed}")))

    def answered_from_recording(self, line: bytes, message: Any) -> str | None:
        """Answer the client's `line` (parsed: `message`) from the recording; why not, for a request the
        recording lacks (None: it is answered, or needs no answer)."""
        if isinstance(message, list) and message:
            self._batch(message)
            return None
        if not isinstance(message, dict):
            logger.warning("%s: a line that is not a JSON-RPC message, answered with a parse error", self.name)
            self._output.write(orjson.dumps(jsonrpc.error(None, PARSE_ERROR, "parse error: not a JSON-RPC message")))
            return None
        if not _is_request(message):
            return None  # a notification, or the client's answer to a request the recording never makes
        try:
            found = self.answerer.answer(line)
        except Exception as error:  # the run went away: this request cannot be answered, the session goes on
            found = f"the recording could not be read: {error}"
            logger.warning("%s: %s", self.name, found)
            self._output.write(orjson.dumps(jsonrpc.error(message["id"], INTERNAL_ERROR, found)))
            return None
        if isinstance(found, str):
            return found
        self.answered += 1
        if found and message.get("method") == "initialize":
            self.version = _agreed(message, found[-1]) or self.version
        for each in answered_as(found, message):
            self._output.write(each)
        return None

    def _batch(self, batch: list[Any]) -> None:
        """A JSON-RPC batch: refused when the version the recording agreed to has none; else each request
        answered from the recording (what the server wrote before its answers first), in one array."""
        if not _batches(self.version):
            self._output.write(orjson.dumps(_no_batches(self.version)))
            return
        answers = []
        for request in batch:
            if not _is_request(request):
                continue
            try:
                found = self.answerer.answer(orjson.dumps(request))
            except Exception as error:
                found = f"the recording could not be read: {error}"
            if isinstance(found, str):
                self.missed += 1
                logger.warning("%s: not recorded: %s", self.name, found)
                answers.append(jsonrpc.error(request["id"], NOT_RECORDED, f"llmproxy replay: {found}"))
                continue
            self.answered += 1
            *before, answer = answered_as(found, request)
            for each in before:
                self._output.write(each)
            answers.append(orjson.loads(answer))
        if answers:
            self._output.write(orjson.dumps(answers))


class FallbackTap:
    """Replays what the recording holds and records what it lacks (a replay's `new_episodes` mode, as vcrpy
    means it): each request is answered from the recording when it holds it; the first it lacks starts the
    server, which answers it and each later one the recording lacks, each recorded. A server started late is
    first told what the client told the recording before (its `initialize`, answered to the tap alone, and
    `notifications/initialized`), so that it answers as it would have from the start; after that it also
    gets the client's notifications."""

    _HANDSHAKE_ID: Final = "llmproxy-mcp-tap-initialize"
    _HANDSHAKE_WAIT: Final = 30.0  # seconds a server has to answer the handshake's initialize

    def __init__(
        self, name: str, command: Sequence[str], answerer: Answerer, recorder: Recorder, output: IO[bytes]
    ) -> None:
        self.name = name
        self.replaying = ReplayingTap(name, answerer, output)
        self.recording = RecordingTap(name, command, recorder, output)
        self.started = False

    def run(self, lines: IO[bytes]) -> int:
        """Answer `lines` (the agent's stdin) until they end; the server's exit status, 0 when it never ran.
        Raises OSError when the server cannot be started."""
        told: list[tuple[bytes, bool]] = []  # what a late server must hear first; whether it is the initialize
        stream = (line.rstrip(b"\r\n") for line in lines if line.strip())
        for line in stream:
            message = _parsed(line)
            if self.replaying.answered_from_recording(line, message) is None:
                told += self._to_tell(message)
                continue
            self.started = True
            return self.recording.run(self._forwarded(told, line, stream))
        return 0

    def _to_tell(self, message: Any) -> list[tuple[bytes, bool]]:
        if not isinstance(message, dict):
            return []
        if message.get("method") == "initialize" and _is_request(message):
            return [(orjson.dumps({**message, "id": self._HANDSHAKE_ID}), True)]
        if message.get("method") == "notifications/initialized":
            return [(orjson.dumps(message), False)]
        return []

    def _forwarded(self, told: list[tuple[bytes, bool]], missed: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
        """What the server reads: the handshake, the first request the recording lacked, then each line of the
        client's the recording does not answer."""
        for line, initializes in told:
            waited = self.recording.own(self._HANDSHAKE_ID) if initializes else None
            yield line
            if waited is not None and not waited.wait(self._HANDSHAKE_WAIT):
                logger.warning("%s did not answer the replayed initialize within %gs", self.name, self._HANDSHAKE_WAIT)
        yield missed
        for line in rest:
            message = _parsed(line)
            if _is_request(message) and self.replaying.answered_from_recording(line, message) is None:
                continue
            yield line
