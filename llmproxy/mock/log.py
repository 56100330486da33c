"""What the mock received and what it answered, in order: the end-of-run summary, `--log FILE` (JSON
lines, redacted like cassettes: secrets never reach the disk), and what tests assert on ("the tool's
output came back in request 2").

Each entry carries the request's gist — provider, model, completed assistant turns, the latest message and
the tool results it brings back since the last assistant turn — and the answer: which expectation and turn,
the status, the text and tool calls, or why nothing matched.
"""

import contextlib
import logging
import threading
from collections import Counter, deque
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Incoming, decode_conversation
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.errors import LlmproxyError
from llmproxy.model import Conversation, Message, Role, Usage
from llmproxy.providers.base import ChatCodec
from llmproxy.words import plural

if TYPE_CHECKING:  # a log with nothing to log (record's, replay's mock stage) does not import the engine
    from llmproxy.mock.engine import MockDecision, MockMiss

logger = logging.getLogger(__name__)

_EXCERPT = 2000  # characters of a text kept in an entry


_AFTER = frozenset(source.value for source in ReplySource)  # what answered a request the mock passed on

KEPT = 10_000  # entries kept in memory: a stress run of millions of requests must not grow without bound
SHOWN = 100  # requests listed in the end-of-run summary
UNREAD_BYTES = 16 * 1024 * 1024  # request bodies held for entries not read yet; past this, the oldest are read


class MockLog:
    """The whole log goes to `--log FILE`; memory keeps the latest `KEPT` entries (at least) and the counts.

    An entry's conversation details (the latest message, the tool results) need the request decoded, which
    costs more than the rest of an answer: in memory they are read when the entry is, from the request body
    kept until then, so a run that never looks at them never pays. `--log FILE` reads every entry at once."""

    def __init__(self, redactor: Redactor, path: Path | None = None) -> None:
        self.count = 0  # requests logged
        self.missed_count = 0
        self.passed: Counter[str] = Counter()  # requests something after the mock answered, by what answered
        self._logged: list[_Logged] = []
        self._unread: deque[_Logged] = deque()  # entries holding a body, oldest first (some read since)
        self._unread_bytes = 0
        self._redactor = redactor
        self._lock = threading.Lock()
        self._path = path
        self._failure: str | None = None  # why the file stopped being written
        try:
            self._file: IO[bytes] | None = path.open("ab") if path is not None else None
        except OSError as exc:
            raise LlmproxyError(f"cannot write the request log {path}: {exc.strerror or exc}") from None

    def answered(self, request: Incoming, decision: "MockDecision", reply: Reply) -> None:
        outcome: dict[str, Any] = {"answeredBy": decision.source, "status": reply.status}
        outcome.update(decision.said(_EXCERPT))
        if decision.missed is not None:  # answered as the protocol says, but nothing was scripted for it
            outcome["miss"] = decision.missed
        if reply.notes or reply.warnings:
            outcome["notes"] = [*reply.notes, *reply.warnings]
        if reply.usage is not None:
            outcome["usage"] = _usage_gist(reply.usage)
        self._add(request, outcome)

    def missed(self, request: Incoming, miss: "MockMiss") -> None:
        self._add(request, {"miss": miss.explain()})

    def passed_on(self, request: Incoming, source: ReplySource) -> None:
        """No expectation matched `request`, and something after the mock answered it: the cassette behind it,
        the background stage, the upstream (`answeredBy` says which). Not a miss: the client got its answer."""
        with self._lock:
            self.passed[source.value] += 1
        self._add(request, {"answeredBy": source.value})

    @property
    def entries(self) -> list[dict[str, Any]]:
        with self._lock:
            return [logged.read() for logged in self._logged]

    @property
    def misses(self) -> list[dict[str, Any]]:
        with self._lock:
            return [logged.read() for logged in self._logged if "miss" in logged.outcome]

    def summary(self, faulted_before: int = 0) -> str:
        """The counts, then a line per request (the latest `SHOWN`): what came in and what answered it.
        `faulted_before`: requests an injected fault answered before they reached the mock (counted, not listed)."""
        before = faulted_before and f" ({faulted_before:,} answered by an injected fault before reaching the mock)"
        mocked = self.count - self.missed_count - sum(self.passed.values())
        counted = f"{mocked:,} of {plural(self.count + faulted_before, 'request')}"
        lines = [f"mock answered {counted}{before or ''}"]
        if self.passed:  # "; 3 more answered after it (cassette ×2, background)"
            by = ", ".join(f"{source} ×{count:,}" if count > 1 else source for source, count in self.passed.items())
            lines[0] += f"; {sum(self.passed.values()):,} more answered after it ({by})"
        if self.count > SHOWN:
            whole = self._path is not None and self._failure is None  # written whole, open still or closed
            where = "the --log file has them all" if whole else "--log FILE keeps them all"
            lines.append(f"  … {plural(self.count - SHOWN, 'earlier request')} not listed ({where})")
        for logged in self._logged[-SHOWN:]:
            head, outcome = logged.head, logged.outcome
            what = f"{head.get('provider') or head['host']} {head.get('model') or ''}".rstrip()
            turn = f" (turn index {head.get('turnIndex', '-')})"
            if "mcp" in outcome or "a2a" in outcome:  # to a mock MCP server or A2A agent: it says what it asked
                what, turn = f"{head['method']} {head['host']}{head['path']}", ""
            elif "miss" in outcome or outcome["answeredBy"] in _AFTER:  # what came in, exactly
                what = f"{head['method']} {head['host']}{head['path']}"
            answered = f"missed: {outcome['miss']}" if "miss" in outcome else outcome["answeredBy"]
            lines.append(f"  {head['seq']}. {what}{turn}: {answered}")
        return "\n".join(lines)

    def close(self) -> None:
        """Raises LlmproxyError when the file could not be written whole."""
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError as exc:
                self._failure = self._failure or f"cannot write the request log {self._path}: {exc.strerror or exc}"
        if self._failure is not None:
            raise LlmproxyError(f"{self._failure}: it is incomplete")

    def _add(self, request: Incoming, outcome: dict[str, Any]) -> None:
        """Entries stay in memory as they are; what goes to the file is redacted first."""
        with self._lock:
            self.count += 1
            self.missed_count += "miss" in outcome
            logged = _Logged(_request_gist(request, self.count), outcome)
            if request.conversation_decoded or self._file is not None:
                logged.head.update(_conversation_gist(request.conversation))
            elif request.codec is not None:  # read when the entry is: the body is kept, not the parsed JSON
                logged.unread = (request.codec, request.body)
            self._logged.append(logged)
            if len(self._logged) > 2 * KEPT:  # trimmed in batches: one copy per KEPT requests
                for old in self._logged[:KEPT]:
                    self._unread_bytes -= old.forget()
                del self._logged[:KEPT]
                while self._unread and self._unread[0].unread is None:
                    self._unread.popleft()
            if self._file is not None:
                logged.head["startedAt"] = datetime.now(UTC).isoformat().replace("+00:00", "Z")
                self._write(orjson.dumps(self._redactor.json(logged.read())) + b"\n")
            elif logged.unread is not None:
                self._unread.append(logged)
                self._unread_bytes += len(request.body)
                while self._unread_bytes > UNREAD_BYTES:  # the oldest bodies go: their entries are read now
                    self._unread_bytes -= self._unread.popleft().read_details()

    def _write(self, line: bytes) -> None:
        """A line to the file; when that fails (a full disk) the mock carries on, the log only in memory,
        and says so once now and again at the end."""
        assert self._file is not None
        try:
            self._file.write(line)
            self._file.flush()
        except OSError as exc:
            self._failure = f"cannot write the request log {self._path}: {exc.strerror or exc}"
            logger.error("%s: the mock goes on, logging in memory only", self._failure)
            file, self._file = self._file, None
            with contextlib.suppress(OSError):  # what it buffered is lost with the rest
                file.close()


@dataclass(slots=True)
class _Logged:
    """An entry: what came in (`head`), what answered it (`outcome`), and until its conversation details are
    read, the chat request body they come from."""

    head: dict[str, Any]
    outcome: dict[str, Any]
    unread: tuple[ChatCodec, bytes] | None = None

    def read(self) -> dict[str, Any]:
        self.read_details()
        return {**self.head, **self.outcome}

    def read_details(self) -> int:
        """Add the conversation details to the entry; the bytes of body it no longer holds."""
        if self.unread is None:
            return 0
        self.head.update(_conversation_gist(decode_conversation(*self.unread)))
        return self.forget()

    def forget(self) -> int:
        """Let the body go unread (the entry is trimmed away); the bytes it held."""
        held = len(self.unread[1]) if self.unread is not None else 0
        self.unread = None
        return held


def _request_gist(request: Incoming, seq: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"seq": seq, "method": request.method, "host": request.host, "path": request.path}
    if request.route is not None:
        entry["provider"] = request.route.provider.value
        entry["operation"] = request.route.operation.value
        entry["stream"] = bool(request.route.streaming)
        if request.route.websocket:
            entry["websocket"] = True
    if request.model:
        entry["model"] = request.model
    if request.codec is not None:
        entry["turnIndex"] = request.turn
    return entry


def _conversation_gist(conversation: Conversation | None) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if conversation is None:
        return entry
    latest = conversation.latest
    if latest is not None:
        entry["latestRole"] = latest.role.value
        entry["latestText"] = latest.text[:_EXCERPT]
    results = [part for message in _since_last_answer(conversation.messages) for part in message.tool_results]
    if results:
        entry["toolResults"] = [
            {"name": part.name, "callId": part.tool_call_id, "text": part.text[:_EXCERPT]} for part in results
        ]
    return entry


def _since_last_answer(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The messages after the last assistant turn: what this request brings back (tool results named by the
    decoder). Earlier results were logged with the requests that brought them."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role is Role.ASSISTANT:
            return messages[index + 1 :]
    return messages


def _usage_gist(usage: Usage) -> dict[str, Any]:
    """The answer's tokens as llmproxy counts them (input includes cache reads and writes), for reports."""
    gist: dict[str, Any] = {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens}
    for name, count in (
        ("cachedInputTokens", usage.cache_read_tokens),
        ("cacheWriteTokens", usage.cache_write_tokens),
        ("reasoningTokens", usage.reasoning_tokens),
    ):
        if count:
            gist[name] = count
    if usage.estimated:
        gist["estimated"] = True
    return gist
