"""The calls a report reads: cassettes, mock logs and coding agents' session logs (files, or folders searched
for them), in sessions.

Each cassette is read as stored, its shared histories left shared (`decode`). A request stored whole whose
history begins with an earlier request's is given the same sharing on the fly (`HistoryIndex`), so a
conversation is recognised — and its history read once — whether the cassette shares it or not.
"""

import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from llmproxy.agent_logs.entries import LogEntry
from llmproxy.agent_logs.files import PATTERNS, agent_of
from llmproxy.agent_logs.read import read_logs
from llmproxy.analysis.agent_calls import log_call
from llmproxy.analysis.background import POLL, BackgroundRuns
from llmproxy.analysis.calls import Lineage, RecordedCall, build_call
from llmproxy.analysis.decode import ChatExchange, Routes, read_chat
from llmproxy.analysis.kept import KeptRequests
from llmproxy.analysis.mocklog import is_mock_log, mock_log_calls
from llmproxy.analysis.tool_servers import ToolServerCalls
from llmproxy.cassette.files import iter_exchanges, journal_path
from llmproxy.cassette.history import HistoryIndex, history
from llmproxy.cassette.model import Exchange, JsonBody
from llmproxy.cassette.store import gc_paused
from llmproxy.errors import LlmproxyError
from llmproxy.inputs import expand_paths
from llmproxy.model import Conversation
from llmproxy.pricing import PriceBook

if TYPE_CHECKING:
    from llmproxy.intercept.faults import Injected

_NO_LINEAGE = (0, "")


class Grouping(StrEnum):
    """What a session is. One cassette per test makes `cassette` the per-test grouping."""

    CASSETTE = "cassette"
    FOLDER = "folder"
    CONVERSATION = "conversation"
    HOST = "host"


@dataclass(slots=True)
class SourceSummary:
    path: str
    exchanges: int = 0
    calls: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def cassette_files(paths: Sequence[Path]) -> list[Path]:
    """The cassettes and logs named, folders searched (recursively, in name order) for files that are
    cassettes (`*.json`), mock logs (`*.jsonl`) or agents' session logs (`agent_logs.files`), globs expanded
    (`inputs.py`). Raises LlmproxyError for a path that does not exist (a cassette that is only a journal so
    far does)."""
    files = expand_paths(paths, tuple(dict.fromkeys(("*.json", *PATTERNS))), _is_cassette_or_log)
    for path in files:
        if not (path.exists() or journal_path(path).exists()):
            raise LlmproxyError(f"{path}: no such file or folder")
    return files


class Recorded:
    """Every chat call in the cassettes (recorded order within each file), what each file held, and the
    requests as stored, from which one conversation at a time can be read whole (`conversation`). Exchanges
    are read one at a time and not kept: memory holds the calls' rows and what the conversations said once."""

    def __init__(self, paths: Sequence[Path], book: PriceBook, grouping: Grouping = Grouping.CASSETTE) -> None:
        """Raises LlmproxyError (CassetteError) for a path that is not a readable cassette."""
        self.book, self.grouping = book, grouping
        self.calls: list[RecordedCall] = []
        self.sources: list[SourceSummary] = []
        self._kept: dict[str, KeptRequests] = {}
        self.tool_servers = ToolServerCalls()  # the MCP tool calls beside the chat calls
        with gc_paused():  # every object read lives on: the collector's passes over them would be wasted
            logs: list[tuple[Path, str]] = []
            for path in cassette_files(paths):
                if (agent := agent_of(path)) is not None:
                    logs.append((path, agent))
                elif is_mock_log(path):
                    summary = SourceSummary(str(path))
                    session = str(path.parent) if grouping is Grouping.FOLDER else str(path)
                    found = list(mock_log_calls(path, book, session, summary.skipped))
                    summary.exchanges = len(found) + summary.skipped.total()
                    self._add(summary, found)
                else:
                    self.read(str(path), iter_exchanges(path))
            if logs:
                self._read_logs(logs)

    def _read_logs(self, logs: list[tuple[Path, str]]) -> None:
        """The answers in agents' logs, each once however many logs repeat it, in each log's sessions."""
        entries, skipped = read_logs(logs)
        found: dict[str, list[RecordedCall]] = {str(path): [] for path, _ in logs}
        session_of = _LOG_SESSIONS.get(self.grouping, _log_file)
        for entry in entries:
            found[entry.source].append(log_call(entry, self.book, session_of(entry)))
        for source, calls in found.items():
            summary = SourceSummary(source, skipped=skipped[source])
            summary.exchanges = len(calls)
            self._add(summary, calls)

    @classmethod
    def of_exchanges(
        cls, named: Iterable[tuple[str, Iterable[Exchange]]], book: PriceBook, grouping: Grouping = Grouping.CASSETTE
    ) -> "Recorded":
        """The calls in exchanges held in memory (a running proxy's journal), each sequence read as one cassette
        named as given: the report and the gates read them as they read files."""
        recorded = cls((), book, grouping)
        with gc_paused():
            for name, exchanges in named:
                recorded.read(name, exchanges)
        return recorded

    def read(self, name: str, exchanges: Iterable[Exchange]) -> None:
        """Add the calls of one cassette's exchanges, in recorded order."""
        summary = SourceSummary(name)
        kept = self._kept[name] = KeptRequests()
        found = list(_calls(name, exchanges, self.book, self.grouping, summary, kept, self.tool_servers))
        self.tool_servers.settle()
        self._add(summary, found)

    def _add(self, summary: SourceSummary, found: list[RecordedCall]) -> None:
        summary.calls = len(found)
        self.calls.extend(found)
        self.sources.append(summary)

    def conversation(self, call: RecordedCall) -> Conversation | None:
        """The call's request with its whole history, decoded (None if it no longer decodes, or the call came
        from a mock log, which keeps no requests)."""
        kept = self._kept.get(call.source)
        return kept.conversation(call.exchange_id) if kept is not None else None


def _calls(
    source: str,
    exchanges: Iterable[Exchange],
    book: PriceBook,
    grouping: Grouping,
    summary: SourceSummary,
    kept: KeptRequests,
    tool_servers: ToolServerCalls,
) -> Iterator[RecordedCall]:
    path = Path(source)
    conversations: dict[int, str] = {}  # exchange id → the conversation it belongs to
    lineages: dict[int, tuple[int, str]] = {}  # exchange id → what a request extending it inherits
    digests = HistoryDigests()
    index = HistoryIndex()
    runs = BackgroundRuns()
    routes = Routes()

    def call_of(exchange: Exchange, decoded: ChatExchange) -> RecordedCall:
        parent = decoded.extends
        conversation = conversations.get(parent) if parent is not None else None
        conversation = conversation or f"{source}#{exchange.id}"
        conversations[exchange.id] = conversation
        inherited = lineages.get(parent, _NO_LINEAGE) if parent is not None else _NO_LINEAGE
        call = build_call(
            decoded,
            source=source,
            exchange_id=exchange.id,
            session=_session(grouping, path, conversation, decoded),
            conversation=conversation,
            started_at=exchange.timings.started_at,
            latency_ms=exchange.timings.total_ms,
            ttfb_ms=exchange.timings.ttfb_ms,
            model=exchange.model,
            status=exchange.response.status if exchange.response is not None else None,
            url=exchange.request.url,
            vendor=exchange.vendor or decoded.route.vendor,
            book=book,
            lineage=Lineage(*inherited, digests.add(exchange)),
            injected=_injected(exchange),
        )
        lineages[exchange.id] = (call.history_tokens, call.head_system)
        return call

    for exchange in exchanges:
        summary.exchanges += 1
        exchange = _shared(exchange, index)
        decoded = read_chat(exchange, routes)
        if isinstance(decoded, str):
            tool_servers.add(exchange)
        kept.add(exchange.id, exchange.request, decoded.route if isinstance(decoded, ChatExchange) else None)
        if isinstance(decoded, str):
            finished = runs.poll(exchange)
            summary.skipped[decoded if finished is None else POLL] += 1
            if not isinstance(finished, tuple):
                continue
            exchange, decoded = finished
        elif runs.hold(exchange, decoded):
            continue
        yield call_of(exchange, decoded)
    for exchange, decoded in runs.unfinished():
        yield call_of(exchange, decoded)


def _injected(exchange: Exchange) -> "tuple[Injected, ...]":
    """The faults llmproxy recorded putting into the exchange (their module loads only when there are any)."""
    if not exchange.injected:
        return ()
    from llmproxy.intercept.faults import Injected

    return tuple(Injected.from_record(mark.model_dump()) for mark in exchange.injected)


def _shared(exchange: Exchange, index: HistoryIndex) -> Exchange:
    """The exchange with its history shared with an earlier request's, as the recorder would have stored it."""
    request = exchange.request
    if request.extends is not None or not isinstance(request.body, JsonBody):
        return exchange
    stored, extends = index.share(exchange.id, request.body.json_)
    if extends is None:
        return exchange
    request = request.model_copy(update={"body": JsonBody(json=stored), "extends": extends})
    return exchange.model_copy(update={"request": request})


class HistoryDigests:
    """A digest of each request's whole history list, computed from what is stored: the digest of the shared
    prefix (from the exchange it extends) continued over the stored items, so a history is hashed once."""

    def __init__(self) -> None:
        self._chains: dict[int, tuple[int | None, int, list[bytes]]] = {}  # id → (extends, items, own digests)
        self._found: dict[tuple[int, int], bytes] = {}  # (id, position) → digest, for positions inherited

    def add(self, exchange: Exchange) -> str:
        request = exchange.request
        found = history(request.body.json_) if isinstance(request.body, JsonBody) else None
        items = found[1] if found is not None else []
        parent, shared = (request.extends.exchange, request.extends.items) if request.extends else (None, 0)
        digest = self._at(parent, shared) if parent is not None else b""
        own = []
        for item in items:
            digest = hashlib.blake2b(digest + orjson.dumps(item), digest_size=16).digest()
            own.append(digest)
        self._chains[exchange.id] = (parent, shared, own)
        return digest.hex()

    def _at(self, exchange: int, position: int) -> bytes:
        """The digest of the first `position` items of an exchange's history. One found up a chain of
        inherited prefixes is remembered for every exchange passed: requests that each share one earlier
        prefix with the one before (the same system prompt, the rest new) would otherwise walk the whole chain
        each, a report's time growing with the square of their number."""
        passed: list[int] = []
        digest = b""
        while position > 0 and exchange in self._chains:
            found = self._found.get((exchange, position))
            if found is not None:
                digest = found
                break
            parent, shared, own = self._chains[exchange]
            if position > shared:
                digest = own[position - shared - 1]
                break
            passed.append(exchange)
            if parent is None:
                break
            exchange = parent
        for inherited in passed:
            self._found[inherited, position] = digest
        return digest


def _log_file(entry: LogEntry) -> str:
    return entry.source


_LOG_SESSIONS: dict[Grouping, Callable[[LogEntry], str]] = {  # what a session is, for an agent's log entry
    Grouping.FOLDER: lambda entry: os.path.dirname(entry.source),
    Grouping.CONVERSATION: lambda entry: f"{entry.agent}:{entry.session}",
    Grouping.HOST: lambda entry: entry.url.split("/")[2],
}


def _session(grouping: Grouping, path: Path, conversation: str, decoded: ChatExchange) -> str:
    if grouping is Grouping.FOLDER:
        return str(path.parent)
    if grouping is Grouping.CONVERSATION:
        return conversation
    if grouping is Grouping.HOST:
        return decoded.host
    return str(path)


def _is_cassette_or_log(path: Path) -> bool:
    """Whether a file in a searched folder is a cassette (its opening says so: other JSON is passed over), a
    mock log or an agent's session log."""
    if agent_of(path) is not None:
        return True
    if path.suffix == ".jsonl":
        return is_mock_log(path)
    try:
        with path.open("rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    return b'"llmproxy_cassette"' in head
