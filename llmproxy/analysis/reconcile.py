"""An agent's own log checked against a recording of the same run (`llmproxy report --reconcile`).

Every chat call the cassette recorded is matched to the answer the log kept of it: first by the id the API
gave the answer, where the log keeps it (Claude Code's `msg_…`, Codex's `resp_…`), then — for logs that keep
only their own ids (Gemini CLI, opencode) — by equal token counts, the nearest in time. A pair agrees when the
log's tokens are the wire's. Calls with no log entry are what the log leaves out (a title, a compaction, a
routing question, a failed call); log entries with no call were answered where the recording did not look.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from llmproxy.agent_logs.entries import LogEntry
from llmproxy.agent_logs.read import read_logs
from llmproxy.analysis.decode import ChatExchange, Routes, read_chat
from llmproxy.analysis.figures import money
from llmproxy.cassette.files import iter_exchanges
from llmproxy.model import Role, Usage
from llmproxy.pricing import PriceBook, Priced
from llmproxy.words import plural

_COUNTS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


@dataclass(frozen=True, slots=True)
class WireCall:
    source: str
    exchange_id: int
    started_at: datetime
    model: str | None
    response_id: str | None
    usage: Usage
    cost: Decimal | None
    purpose: str  # what the call was for, as far as its request says (for calls the log lacks)


@dataclass(frozen=True, slots=True)
class Pair:
    call: WireCall
    entry: LogEntry
    matched_by: str  # "response id" | "tokens"
    log_cost: Decimal | None

    @property
    def agrees(self) -> bool:
        return all(getattr(self.call.usage, name) == getattr(self.entry.usage, name) for name in _COUNTS)


@dataclass
class Reconciliation:
    pairs: list[Pair] = field(default_factory=list)
    unlogged: list[WireCall] = field(default_factory=list)  # recorded, not in the log
    unrecorded: list[LogEntry] = field(default_factory=list)  # in the log, not recorded

    @property
    def agrees(self) -> bool:
        """Every logged answer has its recorded call, with the same tokens."""
        return not self.unrecorded and all(pair.agrees for pair in self.pairs)

    def verdict(self) -> str:
        logged = len(self.pairs) + len(self.unrecorded)
        agreeing = sum(pair.agrees for pair in self.pairs)
        line = f"{'agrees' if self.agrees else 'disagrees'}: {agreeing} of {logged} logged answers match"
        line += " their recorded call token for token"
        if self.unrecorded:
            line += f"; {len(self.unrecorded)} with no recorded call"
        if self.unlogged:
            purposes = sorted({call.purpose for call in self.unlogged})
            line += f"; {plural(len(self.unlogged), 'recorded call')} not in the log ({', '.join(purposes)})"
        return line

    def as_json(self) -> dict[str, object]:
        return {
            "agrees": self.agrees,
            "verdict": self.verdict(),
            "matched": [
                {
                    "call": _call_json(pair.call),
                    "log": _entry_json(pair.entry),
                    "matchedBy": pair.matched_by,
                    "agrees": pair.agrees,
                    "logCostUsd": _money(pair.log_cost),
                }
                for pair in self.pairs
            ],
            "notInLog": [_call_json(call) for call in self.unlogged],
            "notRecorded": [_entry_json(entry) for entry in self.unrecorded],
        }

    def table(self) -> str:
        """The verdict, then one row per recorded call and per unmatched log entry, in time order."""
        rows = [("call", "log entry", "model", "wire in/cached/out", "log in/cached/out", "wire $", "log $", "")]
        for pair in self.pairs:
            mark = f"{'ok' if pair.agrees else 'DIFFERS'} ({pair.matched_by})"
            wire = (_call_ref(pair.call), _entry_ref(pair.entry), _models(pair), _counts(pair.call.usage))
            rows.append((*wire, _counts(pair.entry.usage), _usd(pair.call.cost), _usd(pair.log_cost), mark))
        for call in self.unlogged:
            why = f"not in the log: {call.purpose}"
            rows.append((_call_ref(call), "—", call.model or "?", _counts(call.usage), "—", _usd(call.cost), "—", why))
        for entry in self.unrecorded:
            lost = "no recorded call"
            rows.append(("—", _entry_ref(entry), entry.model or "?", "—", _counts(entry.usage), "—", "—", lost))
        widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
        return f"llmproxy report --reconcile: {self.verdict()}\n\n" + "\n".join(lines) + "\n"


def reconcile(logs: Sequence[tuple[Path, str]], cassettes: Sequence[Path], book: PriceBook) -> Reconciliation:
    entries, _ = read_logs(logs)
    calls = [call for path in cassettes for call in _wire_calls(path, book)]
    calls.sort(key=lambda call: (call.started_at, call.source, call.exchange_id))
    result = Reconciliation()
    by_id = {entry.response_id: entry for entry in entries if entry.response_id}
    left: list[LogEntry] = [entry for entry in entries if not entry.response_id]
    paired: set[int] = set()  # ids of the entries matched
    pending: list[WireCall] = []
    for call in calls:
        entry = by_id.pop(call.response_id, None) if call.response_id else None
        if entry is not None:
            result.pairs.append(Pair(call, entry, "response id", _log_cost(entry, book)))
            paired.add(id(entry))
        else:
            pending.append(call)
    left += by_id.values()  # ids the wire never gave: matched by their tokens, as the others
    for call in pending:
        same = [entry for entry in left if id(entry) not in paired and _same_tokens(call.usage, entry.usage)]
        if same:
            entry = min(same, key=lambda entry: abs((entry.started_at - call.started_at).total_seconds()))
            result.pairs.append(Pair(call, entry, "tokens", _log_cost(entry, book)))
            paired.add(id(entry))
        else:
            result.unlogged.append(call)
    result.unrecorded = sorted(
        (entry for entry in entries if id(entry) not in paired), key=lambda entry: entry.started_at
    )
    result.pairs.sort(key=lambda pair: (pair.call.started_at, pair.call.source, pair.call.exchange_id))
    return result


def _wire_calls(path: Path, book: PriceBook) -> list[WireCall]:
    routes = Routes()
    found = []
    for exchange in iter_exchanges(path):
        decoded = read_chat(exchange, routes)
        if not isinstance(decoded, ChatExchange):
            continue
        completion = decoded.completion
        usage = decoded.usage or Usage()
        model = exchange.model or decoded.conversation.model or (completion.model if completion else None)
        started = exchange.timings.started_at
        cost = book.cost(usage, model, at=started, url=exchange.request.url, provider=decoded.route.provider)
        found.append(
            WireCall(
                source=str(path),
                exchange_id=exchange.id,
                started_at=started,
                model=model,
                response_id=completion.id if completion is not None else None,
                usage=usage,
                cost=cost.usd if isinstance(cost, Priced) else None,
                purpose=_purpose(decoded),
            )
        )
    return found


def _purpose(decoded: ChatExchange) -> str:
    """What a call the log lacks was for, from its request: agents leave their side requests out."""
    if decoded.completion is None:
        return "failed call"
    request = decoded.conversation
    said = " ".join(part.text for part in request.system).lower()
    said += " ".join(message.text for message in request.messages if message.role is Role.SYSTEM).lower()
    if "title" in said:
        return "title generation"
    if "summar" in said or "compact" in said:
        return "compaction or summary"
    if not request.tools:
        return "side request (no tools offered)"
    return "a turn the log does not keep"


def _same_tokens(wire: Usage, logged: Usage) -> bool:
    return all(getattr(wire, name) == getattr(logged, name) for name in _COUNTS)


def _log_cost(entry: LogEntry, book: PriceBook) -> Decimal | None:
    """The log's answer priced by the same book (opencode's own figure is in `logged_cost`)."""
    cost = book.cost(entry.usage, entry.model, at=entry.started_at, url=entry.url, provider=entry.provider)
    return cost.usd if isinstance(cost, Priced) else None


def _call_json(call: WireCall) -> dict[str, object]:
    return {
        "source": call.source,
        "exchangeId": call.exchange_id,
        **_answer_json(call.model, call.response_id, call.usage),
        "costUsd": _money(call.cost),
        "purpose": call.purpose,
    }


def _entry_json(entry: LogEntry) -> dict[str, object]:
    return {
        "agent": entry.agent,
        "source": entry.source,
        "line": entry.line,
        "session": entry.session,
        **_answer_json(entry.model, entry.response_id, entry.usage),
        "agentCostUsd": _money(entry.logged_cost),
    }


def _answer_json(model: str | None, response_id: str | None, usage: Usage) -> dict[str, object]:
    """What a call on the wire and a log's entry both say of an answer, named alike in either's JSON."""
    return {"model": model, "responseId": response_id, "tokens": _tokens(usage)}


def _money(value: Decimal | None) -> str | None:
    return money(value) if value is not None else None


def _tokens(usage: Usage) -> dict[str, int]:
    return {name: getattr(usage, field) for name, field in _TOKENS_JSON}


_TOKENS_JSON = (  # the JSON's name of each count
    ("input", "input_tokens"),
    ("cachedInput", "cache_read_tokens"),
    ("cacheWrite", "cache_write_tokens"),
    ("output", "output_tokens"),
    ("reasoning", "reasoning_tokens"),
)


def _call_ref(call: WireCall) -> str:
    return f"{Path(call.source).name}#{call.exchange_id}"


def _entry_ref(entry: LogEntry) -> str:
    return f"{Path(entry.source).name}:{entry.line}"


def _models(pair: Pair) -> str:
    """The model the wire named, and the log's where it names another (the Gemini CLI logs the one it asked
    for, the API answers with the one that served)."""
    wire, logged = pair.call.model or "?", pair.entry.model or "?"
    return wire if wire == logged else f"{wire} (log: {logged})"


def _counts(usage: Usage) -> str:
    return f"{usage.input_tokens}/{usage.cache_read_tokens}/{usage.output_tokens}"


def _usd(value: Decimal | None) -> str:
    return f"${money(value)}" if value is not None else "—"
