"""What the mock received and what it answered, in order: the end-of-run summary, `--log FILE` (JSON
lines, redacted like cassettes: secrets never reach the disk), and what tests assert on ("the tool's
output came back in request 2").

Each entry carries the request's gist — provider, model, completed assistant turns, the latest message and
the tool results it brings back since the last assistant turn — and the answer: which expectation and turn,
the status, the text and tool calls, or why nothing matched.
"""

import threading
from pathlib import Path
from typing import IO, Any

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.mock import spec
from llmproxy.mock.engine import MockDecision, MockMiss
from llmproxy.mock.reply import MockReply
from llmproxy.mock.request import MockRequest
from llmproxy.model import Message, Role

_EXCERPT = 2000  # characters of a text kept in an entry


KEPT = 10_000  # entries kept in memory: a stress run of millions of requests must not grow without bound
SHOWN = 100  # requests listed in the end-of-run summary


class MockLog:
    """The whole log goes to `--log FILE`; memory keeps the latest `KEPT` entries (at least) and the counts."""

    def __init__(self, redactor: Redactor, path: Path | None = None) -> None:
        self.entries: list[dict[str, Any]] = []
        self.count = 0  # requests logged
        self.missed_count = 0
        self._redactor = redactor
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = path.open("ab") if path is not None else None

    def answered(self, request: MockRequest, decision: MockDecision, reply: MockReply) -> None:
        entry = _request_gist(request)
        entry["answeredBy"] = decision.source
        entry["status"] = reply.status
        entry.update(_answer_gist(decision.answer))
        if reply.notes or reply.warnings:
            entry["notes"] = [*reply.notes, *reply.warnings]
        self._add(entry)

    def missed(self, request: MockRequest, miss: MockMiss) -> None:
        entry = _request_gist(request)
        entry["miss"] = miss.explain()
        self._add(entry)

    @property
    def misses(self) -> list[dict[str, Any]]:
        return [entry for entry in self.entries if "miss" in entry]

    def summary(self) -> str:
        """The counts, then a line per request (the latest `SHOWN`): what came in and what answered it."""
        lines = [f"mock answered {self.count - self.missed_count} of {self.count} requests"]
        if self.count > SHOWN:
            where = "the --log file has them all" if self._file is not None else "--log FILE keeps them all"
            lines.append(f"  … {self.count - SHOWN} earlier requests not listed ({where})")
        for entry in self.entries[-SHOWN:]:
            what = f"{entry.get('provider') or entry['host']} {entry.get('model') or ''}".rstrip()
            outcome = entry.get("answeredBy") or "no expectation matched"
            lines.append(f"  {entry['seq']}. {what} (turn index {entry.get('turnIndex', '-')}): {outcome}")
        return "\n".join(lines)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _add(self, entry: dict[str, Any]) -> None:
        """Entries stay in memory as they are; what goes to the file is redacted first."""
        with self._lock:
            self.count += 1
            self.missed_count += "miss" in entry
            entry["seq"] = self.count
            self.entries.append(entry)
            if len(self.entries) > 2 * KEPT:  # trimmed in batches: one copy per KEPT requests
                del self.entries[:KEPT]
            if self._file is not None:
                self._file.write(orjson.dumps(self._redactor.json(entry)) + b"\n")
                self._file.flush()


def _request_gist(request: MockRequest) -> dict[str, Any]:
    entry: dict[str, Any] = {"seq": 0, "host": request.host, "path": request.path}  # seq first, numbered in `_add`
    if request.route is not None:
        entry["provider"] = request.route.provider.value
        entry["operation"] = request.route.operation.value
        entry["stream"] = bool(request.route.streaming)
    if request.model:
        entry["model"] = request.model
    conversation = request.conversation
    if conversation is not None:
        entry["turnIndex"] = conversation.assistant_turns
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


def _answer_gist(answer: spec.Answer) -> dict[str, Any]:
    if isinstance(answer, spec.Respond):
        gist: dict[str, Any] = {}
        if answer.text:
            gist["text"] = answer.text[:_EXCERPT]
        if answer.toolCalls:
            gist["toolCalls"] = [{"name": call.name, "arguments": call.arguments} for call in answer.toolCalls]
        return gist
    if isinstance(answer, spec.ErrorReply):
        return {"error": answer.message or f"status {answer.status}"}
    return {"answer": type(answer).__name__.lower()}
