"""Shared parts: a value an agent sends again and again is stored once per cassette.

A coding agent re-sends its system prompt and every tool definition on each call, and the Responses API echoes
them back in three events of every answer; history sharing (`history.py`) stores the conversation once, but not
these. So a stored exchange may name, in ``parts``, values it introduces, each under an id derived from its
content (the first 12 hex digits of the SHA-256 of its compact JSON), and any JSON value in its request body or
response (body, events) may be the object ``{"$part": ID}``, standing for a part this exchange or an earlier one
in the same cassette introduced. Parts are taken from request bodies at the places that hold instructions — each
tool definition alone, so a tool list that changes by one tool stores one new tool, and the list of them as a part
of references, so a later call that sends the same list says so once — and, anywhere else, a large value the
moment it is seen again. A value an earlier answer gave (its text, a tool call's input), which an agent sends back
in the history of its next call, is a part that is not written again: ``{"$answer": N, "path": …}`` says where
exchange N's answer gives it (`answers.py`), and its id is checked against what the answer gives when it is
read. Ids depend on content alone: recording the same session again writes the same parts, in the same places.

`Compactor` turns stored exchanges (as `model.dump` gives them, redacted, histories shared) into that form, one
after the other in cassette order; `Parts` turns them back, one after the other, when the file is read, so every
reader past `files.py` sees whole exchanges. An exchange without ``parts`` has no references, so a cassette
written before parts existed is read as it always was: a request that happens to send ``{"$part": …}`` itself is
stored without parts (whole), and its object is never taken for a reference.
"""

import hashlib
import re
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from llmproxy.cassette.answers import answer_value, answer_values
from llmproxy.cassette.history import history
from llmproxy.cassette.streams import STREAM, StreamError, compact_stream, expand_stream

PARTS = "parts"  # the exchange's field: the parts it introduces, by id (an empty object when it only refers)
REF = "$part"
ANSWER = "$answer"  # a part introduced as {"$answer": N, "path": …}: a value exchange N's answer gives (`answers.py`)
MIN_BYTES = 256  # a smaller value costs about as much to refer to as to store again
LARGE_BYTES = 1024  # a request's value this large is a part the first time it is seen (it may well come again)
ID_HEX = 12
# Where a request body holds instructions and tool definitions, in every API llmproxy knows: a value here is
# stored as a part the first time it is seen, each item of a list alone.
_AT_ONCE: tuple[tuple[str, ...], ...] = (
    ("system",),  # Anthropic, Bedrock Converse
    ("instructions",),  # OpenAI Responses
    ("tools",),  # every API's tool list
    ("toolConfig", "tools"),  # Bedrock Converse
    ("systemInstruction",),  # Gemini
    ("system_instruction",),
    ("request", "systemInstruction"),  # Gemini Code Assist
    ("request", "tools"),
)


# A reference in JSON text: compact, or as the cassette lays it out. In a JSON string the quotes would be
# escaped, so only an object can match.
_REFERENCE = re.compile(rb'\{\s*"\$part":\s*"([0-9a-f]{12})"\s*\}')
_FROM_ANSWER = b'{"$answer":'
# A part names the answer of one of the exchanges this many ids before it, at most: an agent sends an answer back
# in its next call, and a reader of a long recording keeps only these answers, not every one it has read.
ANSWERS_BACK = 64
_PART_LINE = re.compile(rb'\s*"([0-9a-f]{12})": ')
# The exchange's own "parts" field as `files.encode_exchange` lays it out in the cassette, one part a line, each
# line ending with a comma or the newline before the closing brace (JSON strings hold no raw newline).
_PARTS_OPENING = b'\n      "parts": {'
_PARTS_CLOSING = b"\n      },"
_HEAD = 2048  # bytes: id, provider, operation, vendor, model, streaming, websocket and background come before it
_ID = re.compile(rb'^\{\s*"id":\s*(\d+)')


class PartError(ValueError):
    """A reference to a part that no earlier exchange introduced, or a part whose content is not its id's."""


def part_id(encoded: bytes) -> str:
    return hashlib.sha256(encoded).hexdigest()[:ID_HEX]


_CHECKED_BYTES = 4 << 20  # how much part content `checked_id` remembers, at most
_checked: dict[bytes, str] = {}  # part content → its id, oldest first
_checked_size = 0


def checked_id(encoded: bytes) -> str:
    """`part_id`, remembered for the parts read last: a report over a folder of cassettes, a test suite's
    cassettes, a replay that reads its cassette again at the end, read the same system prompt and tools in every
    file. Looking content up (a hash table's hash and one comparison) costs a fraction of SHA-256, and the content
    is compared whole, so an edited part is still hashed and refused."""
    global _checked_size
    known = _checked.get(encoded)
    if known is None:
        known = part_id(encoded)
        _checked[encoded] = known
        _checked_size += len(encoded)
        while _checked_size > _CHECKED_BYTES:
            oldest = next(iter(_checked))
            _checked_size -= len(oldest)
            del _checked[oldest]
    return known


class RecentIds:
    """`part_id`, remembered for the values compacted lately, one a length: a recording meets the same value
    again within a few exchanges (an answer's text is counted in its exchange, read as what the answer gives
    when the next request comes, and sent back in that request's history), and a value of the same length that
    is not the same is nearly always a new one. So a value is looked up by its length, which costs nothing, and
    compared whole (a memory comparison, a fraction of SHA-256's time), and a new value costs no more than its
    hash: a lookup by content would first hash it in Python, at half SHA-256's cost."""

    def __init__(self, budget: int = _CHECKED_BYTES) -> None:
        self._by_length: dict[int, tuple[bytes, str]] = {}  # oldest first
        self._size = 0
        self._budget = budget  # bytes of content remembered, at most

    def __call__(self, encoded: bytes) -> str:
        size = len(encoded)
        known = self._by_length.pop(size, None)
        if known is not None:
            self._size -= size
            if known[0] != encoded:
                known = None
        if known is None:
            known = (encoded, part_id(encoded))
        self._by_length[size] = known  # the newest now
        self._size += size
        while self._size > self._budget:
            oldest = next(iter(self._by_length))
            self._size -= oldest
            del self._by_length[oldest]
        return known[1]


class Compactor:
    """Stored exchanges in cassette order, each with the parts it introduces and its repeated values referred to.
    The same exchanges give the same bytes whatever was compacted before them in another file: a cassette
    appended to is compacted again from its first exchange."""

    def __init__(self) -> None:
        self._known: set[str] = set()  # the ids of parts introduced so far
        self._seen: set[str] = set()  # large values seen once, not parts (yet)
        self._digests: dict[int, tuple[int, str]] = {}  # for the exchange being compacted: id(value) → size, id
        self._recurring: set[str] = set()  # the part ids of values it holds more than once
        self._answered: list[dict[str, Any]] = []  # exchanges whose answers are not read yet (`answers.py`)
        self._answers: dict[str, dict[str, Any]] = {}  # what earlier answers gave: part id → {"$answer": N, …}
        self._given: deque[tuple[int, list[str]]] = deque()  # which of them each answer gave, oldest first
        self._lists: dict[str, str] = {}  # a list part's id by its whole content's (`_whole_list`)
        self._ids = RecentIds()

    def compact(self, exchange: dict[str, Any]) -> dict[str, Any]:
        """`exchange` (a stored exchange: `model.dump`'s form) with its shared parts referred to and its stream's
        events in their compact form (`streams.py`); itself when there is nothing to do. A request that sends a
        `{"$part": …}` object of its own is stored without parts."""
        return _streamed(self._shared(exchange))

    def _shared(self, exchange: dict[str, Any]) -> dict[str, Any]:
        request = exchange.get("request")
        body = request.get("body") if isinstance(request, dict) else None
        response = exchange.get("response")
        whole = exchange
        if isinstance(body, dict) and "json" in body:
            self._read_answers(exchange.get("id"))
        recurring = self._count(exchange)
        if recurring is None:
            self._digests.clear()
            return exchange
        self._recurring = recurring
        new: dict[str, Any] = {}
        changed = False
        if isinstance(body, dict) and "json" in body:
            json_ = self._request_json(body["json"], new)
            if json_ is not body["json"]:
                exchange = {**exchange, "request": {**request, "body": {**body, "json": json_}}}  # type: ignore[dict-item]
                changed = True
        if isinstance(response, dict):
            shared = self._response(response, new)
            if shared is not response:
                exchange = {**exchange, "response": shared}
                changed = True
        self._digests.clear()
        if isinstance(response, dict) and isinstance(whole.get("id"), int):
            self._answered.append(whole)
        if not changed:
            return exchange
        ordered: dict[str, Any] = {}
        for key, value in exchange.items():  # the parts just before the request, where a reader meets them first
            if key == "request":
                ordered[PARTS] = new
            ordered[key] = value
        return ordered

    def _request_json(self, json_: Any, new: dict[str, Any]) -> Any:
        if not isinstance(json_, dict):
            return self._value(json_, new, strings_from=LARGE_BYTES)
        found = history(json_)
        return self._object(json_, (), {found[0]} if found else set(), new)

    def _object(
        self, value: dict[str, Any], path: tuple[str, ...], conversation: set[tuple[str, ...]], new: dict[str, Any]
    ) -> dict[str, Any]:
        """A request body's object at `path`: instructions and tools are parts at once; any other value of the
        body's own (not its conversation) too when it is large (a telemetry batch), and in the conversation each
        large string (a tool's output, a file), which a later turn may send again."""
        result: dict[str, Any] = {}
        changed = False
        for key, item in value.items():
            here = (*path, key)
            if here in _AT_ONCE:
                if isinstance(item, list):
                    shared = self._whole_list(item, new)
                else:
                    shared = self._value(item, new, introduce_from=MIN_BYTES)
            elif isinstance(item, dict) and any(p[: len(here)] == here for p in (*_AT_ONCE, *conversation)):
                shared = self._object(item, here, conversation, new)
            elif here in conversation:
                shared = self._value(item, new, strings_from=LARGE_BYTES)
            else:
                shared = self._value(item, new, introduce_from=LARGE_BYTES, strings_from=LARGE_BYTES)
            changed = changed or shared is not item
            result[key] = shared
        return result if changed else value

    def _whole_list(self, value: list[Any], new: dict[str, Any]) -> Any:
        """A list of instructions or tools, each item referred to, and the list itself a part too: every later
        call that sends the same list says so in one reference, not one per tool. Its id hashes the list as
        written, references and all (each names its item's content), so a reader checks it without hashing
        every tool a second time."""
        size, whole = self._digest(value)
        if whole in self._lists:
            return {REF: self._lists[whole]}
        listed = [self._value(each, new, introduce_from=MIN_BYTES) for each in value]
        shared: Any = listed if any(a is not b for a, b in zip(listed, value, strict=True)) else value
        if len(value) < 2 or size < MIN_BYTES:
            return shared
        ident = self._ids(orjson.dumps(shared))
        self._lists[whole] = ident
        if ident not in self._known:
            self._known.add(ident)
            new[ident] = shared  # after its items' parts
        return {REF: ident}

    def _response(self, response: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        result = dict(response)
        changed = False
        body = response.get("body")
        if isinstance(body, dict) and "json" in body:
            json_ = self._value(body["json"], new)
            if json_ is not body["json"]:
                result["body"] = {**body, "json": json_}
                changed = True
        events = response.get("events")
        if isinstance(events, list):
            shared_events = []
            for event in events:
                key = next((k for k in ("data", "json", "message") if isinstance(event, dict) and k in event), None)
                if key is not None:
                    value = self._value(event[key], new)
                    if value is not event[key]:
                        event = {**event, key: value}
                        changed = True
                shared_events.append(event)
            result["events"] = shared_events
        return result if changed else response

    def _value(self, value: Any, new: dict[str, Any], introduce_from: int = 0, strings_from: int = 0) -> Any:
        """`value` with itself or what is in it referred to: a part already known; else, what is in it referred to
        first, a new part when it was seen before (or occurs again in this exchange), or is at least
        `introduce_from` bytes (a string in it, `strings_from`). A part may so refer to smaller parts."""
        size, ident = self._digest(value)
        if size < MIN_BYTES:
            return value
        if ident in self._known:
            return {REF: ident}
        source = self._answers.get(ident)
        if source is not None:  # what an earlier answer gave, sent back in this request's history
            self._known.add(ident)
            new[ident] = source
            return {REF: ident}
        inner = value
        if isinstance(value, dict):
            items = {key: self._value(item, new, strings_from=strings_from) for key, item in value.items()}
            inner = items if any(items[key] is not value[key] for key in value) else value
        elif isinstance(value, list):
            listed = [self._value(item, new, strings_from=strings_from) for item in value]
            inner = listed if any(a is not b for a, b in zip(listed, value, strict=True)) else value
        if (
            ident in self._seen
            or ident in self._recurring
            or 0 < introduce_from <= size
            or (isinstance(value, str) and 0 < strings_from <= size)
        ):
            self._known.add(ident)
            new[ident] = inner  # after the parts it refers to, which a reader must know first
            return {REF: ident}
        self._seen.add(ident)
        return inner

    def _read_answers(self, exchange_id: object) -> None:
        """The values of the answers compacted since the last request, by part id: read once, when a request
        that may send them back comes; those of answers more than `ANSWERS_BACK` ids before it forgotten."""
        for exchange in self._answered:
            given = []
            for place, encoded in answer_values(exchange, MIN_BYTES):
                ident = self._ids(encoded)
                if ident not in self._answers:
                    self._answers[ident] = {ANSWER: exchange["id"], **place}
                    given.append(ident)
            self._given.append((exchange["id"], given))
        self._answered.clear()
        while self._given and isinstance(exchange_id, int) and self._given[0][0] < exchange_id - ANSWERS_BACK:
            for ident in self._given.popleft()[1]:
                del self._answers[ident]

    def _digest(self, value: Any) -> tuple[int, str]:
        """The size of a value's compact JSON and its part id; (0, "") for what is never a part (a number)."""
        if not isinstance(value, dict | list | str):
            return 0, ""
        known = self._digests.get(id(value))
        if known is None:
            encoded = orjson.dumps(value)
            known = (len(encoded), self._ids(encoded) if len(encoded) >= MIN_BYTES else "")
            self._digests[id(value)] = known
        return known

    def _count(self, exchange: dict[str, Any]) -> set[str] | None:
        """The part ids of the large values an exchange holds more than once (the Responses API echoes its
        request's tools in three events); None when its JSON holds a ``{"$part": …}`` object of its own. A value
        already a part (or an answer's) is referred to whole: what is in it is not looked at."""
        counts: dict[str, int] = {}
        request, response = exchange.get("request"), exchange.get("response")
        pending: list[Any] = []
        if isinstance(request, dict) and isinstance(request.get("body"), dict):
            pending.append(request["body"].get("json"))
        if isinstance(response, dict):
            if isinstance(response.get("body"), dict):
                pending.append(response["body"].get("json"))
            for event in response.get("events") or ():
                if isinstance(event, dict):
                    pending += [event[key] for key in ("data", "json", "message") if key in event]
        for value in pending:  # each JSON value whole, encoded once: its digest is kept for what follows
            if isinstance(value, dict | list):
                encoded = orjson.dumps(value)
                if _find_reference(encoded, 0) >= 0:
                    return None
                self._digests[id(value)] = (len(encoded), self._ids(encoded) if len(encoded) >= MIN_BYTES else "")
        if pending and isinstance(pending[0], dict) and pending[0] is _json(request):  # never a part itself
            pending += pending.pop(0).values()
        while pending:
            value = pending.pop()
            size, ident = self._digest(value)
            if size < MIN_BYTES or ident in self._known or ident in self._answers:
                continue
            counts[ident] = counts.get(ident, 0) + 1
            if isinstance(value, dict):
                pending += value.values()
            elif isinstance(value, list):
                pending += value
        return {ident for ident, count in counts.items() if count > 1}


def _streamed(exchange: dict[str, Any]) -> dict[str, Any]:
    """The exchange with its response's events stored as a compact stream."""
    response = exchange.get("response")
    events = response.get("events") if isinstance(response, dict) else None
    if not events or not isinstance(events, list) or not all(isinstance(event, dict) for event in events):
        return exchange
    stream = compact_stream(events)
    if stream is None:
        return exchange
    shown = {key: value for key, value in response.items() if key != "events"}  # type: ignore[union-attr]
    shown[STREAM] = stream
    if "content_encoding" in shown:  # where `events` was: before it
        shown["content_encoding"] = shown.pop("content_encoding")
    return {**exchange, "response": shown}


def _json(request: Any) -> Any:
    body = request.get("body") if isinstance(request, dict) else None
    return body.get("json") if isinstance(body, dict) else None


def compacted(exchanges: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A whole cassette's stored exchanges, in order, compacted."""
    compactor = Compactor()
    return (compactor.compact(exchange) for exchange in exchanges)


class Parts:
    """The parts a cassette's exchanges introduced so far, read in file order: `read` (an exchange as the cassette
    lays it out) and `resolve` (one already parsed) give each exchange back whole. References are replaced in
    the exchange's JSON text, by the part's, so an exchange is parsed once, whole, as it was before parts (putting
    parsed values back instead would walk every exchange's JSON in Python: slower than parsing the text again)."""

    def __init__(self) -> None:
        self._parts: dict[bytes, bytes] = {}  # id → the part's compact JSON, its own references put back
        self._answers: dict[int, dict[str, Any]] = {}  # exchange id → {"response": its answer}

    def clear(self) -> None:
        self._parts.clear()
        self._answers.clear()

    def read(self, data: bytes, start: int, end: int) -> Any:
        """The exchange whose JSON text is `data[start:end]`, parsed, its parts put back. Raises PartError, or
        orjson.JSONDecodeError."""
        # "parts" comes before the request, after the first few short fields: only the exchange's head is looked at
        opening = data.find(_PARTS_OPENING, start, min(end, start + _HEAD))
        if opening < 0:  # no parts, so no references (or another layout: read the slower way)
            return self.resolve(orjson.loads(memoryview(data)[start:end]))
        after = opening + len(_PARTS_OPENING)
        lines: list[bytes] = []
        if data.startswith(b"},", after):  # refers to earlier parts only
            cut = after + 2
        else:  # one part a line; JSON text holds no raw newline, so each line ends at the next one
            at = after + 1
            while True:
                line_end = data.find(b"\n", at + 1, end)
                if line_end < 0:
                    return self.resolve(orjson.loads(memoryview(data)[start:end]))
                line = data[at + 1 : line_end]
                if not line.endswith(b","):
                    lines.append(line)
                    break
                lines.append(line[:-1])
                at = line_end
            if not data.startswith(_PARTS_CLOSING, line_end):
                return self.resolve(orjson.loads(memoryview(data)[start:end]))
            cut = line_end + len(_PARTS_CLOSING)
        rest = data[start:opening] + data[cut:end]
        who = _who(rest)
        if lines:
            self._introduce_lines(who, lines)
        return self._remember(orjson.loads(self._put_back(who, rest)))

    def _introduce_lines(self, who: str, lines: list[bytes]) -> None:
        """The parts block's lines, each `"ID": <compact JSON>`, read without parsing what the part holds."""
        for line in lines:
            found = _PART_LINE.match(line)
            if found is None:  # not laid out as llmproxy writes it: parsed
                introduced = orjson.loads(b"{" + b",".join(lines) + b"}")
                if not isinstance(introduced, dict):
                    raise PartError(f"{who}: $.{PARTS}: expected an object of parts by id")
                self._introduce(who, introduced)
                return
            ident, encoded = found[1], line[found.end() :]
            if encoded.startswith(_FROM_ANSWER):
                self._from_answer(who, ident, orjson.loads(encoded))
                continue
            whole = self._put_back(who, encoded)  # a part may refer to earlier ones
            # a list of parts is checked by its references as written; any other part by its whole JSON as written,
            # else as its compact JSON
            listed = whole is not encoded and checked_id(encoded) == ident.decode()
            if listed or checked_id(whole) == ident.decode():
                self._parts[ident] = whole
            else:
                self._introduce(who, {ident.decode(): orjson.loads(whole)})

    def resolve(self, data: Any) -> Any:
        """A stored exchange (parsed JSON) with its parts put back and its ``parts`` gone; anything else as it is.
        Raises PartError naming the exchange and the part."""
        if not isinstance(data, dict) or PARTS not in data:
            return self._remember(data)
        who = f"exchange {data['id']}" if isinstance(data.get("id"), int) else "an exchange"
        introduced = data[PARTS]
        if not isinstance(introduced, dict):
            raise PartError(f"{who}: $.{PARTS}: expected an object of parts by id")
        self._introduce(who, introduced)
        rest = orjson.dumps({key: value for key, value in data.items() if key != PARTS})
        return self._remember(orjson.loads(self._put_back(who, rest)))

    def _introduce(self, who: str, introduced: dict[str, Any]) -> None:
        for ident, value in introduced.items():  # each after the parts it refers to
            if isinstance(value, dict) and ANSWER in value:
                self._from_answer(who, ident.encode(), value)
                continue
            written = orjson.dumps(value)
            encoded = self._put_back(who, written)
            found = checked_id(encoded)
            if found != ident and not (encoded is not written and checked_id(written) == ident):  # a list: as written
                raise PartError(f"{who}: part {ident} does not match its content (which hashes to {found})")
            self._parts[ident.encode()] = encoded

    def _from_answer(self, who: str, ident: bytes, place: dict[str, Any]) -> None:
        """Introduce part `ident` as the value an earlier exchange's answer gives at a place (`answers.py`)."""
        source = place.get(ANSWER)
        answer = self._answers.get(source) if isinstance(source, int) else None
        if answer is None:
            raise PartError(
                f"{who}: part {ident.decode()} names {source!r}, not one of the {ANSWERS_BACK} exchanges before it "
                "with an answer"
            )
        encoded = answer_value(answer, place)
        if encoded is None:
            raise PartError(
                f"{who}: part {ident.decode()}: exchange {source}'s answer has nothing at {place.get('path')!r}"
            )
        if (found := checked_id(encoded)) != ident.decode():
            raise PartError(
                f"{who}: part {ident.decode()} does not match what exchange {source}'s answer gives "
                f"(which hashes to {found})"
            )
        self._parts[ident] = encoded

    def _remember(self, data: Any) -> Any:
        """An exchange just read, its stream's events given back (`streams.py`) and its answer kept for a later
        part that is a value of it."""
        response = data.get("response") if isinstance(data, dict) else None
        if isinstance(response, dict) and STREAM in response:
            if "events" in response:
                raise PartError(f"{_who_of(data)}: $.response: a stream and events both")
            try:
                events = expand_stream(response[STREAM])
            except StreamError as exc:
                raise PartError(f"{_who_of(data)}: {exc}") from None
            data = {**data, "response": _with_events(response, events)}
        if isinstance(data, dict) and isinstance(data.get("id"), int) and isinstance(data.get("response"), dict):
            self._answers[data["id"]] = {"response": data["response"]}
            while (oldest := next(iter(self._answers))) < data["id"] - ANSWERS_BACK:
                del self._answers[oldest]
        return data

    def _put_back(self, who: str, text: bytes) -> bytes:
        """JSON text with each reference replaced by its part's."""
        at = _find_reference(text, 0)
        if at < 0:
            return text
        pieces, done = [], 0
        while at >= 0:
            brace = text.rfind(b"{", done, at)
            found = _REFERENCE.match(text, brace) if brace >= 0 and not text[brace + 1 : at].strip() else None
            if found is None:  # an object with a "$part" key that is not a reference llmproxy wrote
                raise PartError(f'{who}: a {{"$part": …}} object that names no part (an id is 12 hex digits)')
            part = self._parts.get(found[1])
            if part is None:
                raise PartError(f"{who}: part {found[1].decode()} is not introduced by it or an earlier exchange")
            pieces += [text[done:brace], part]
            done = found.end()
            at = _find_reference(text, done)
        pieces.append(text[done:])
        return b"".join(pieces)


def _find_reference(text: bytes, start: int) -> int:
    """Where the next ``"$part"`` is in JSON text, or -1: found by its ``$`` (a search for one byte is several
    times faster than one for a string, and JSON text rarely holds a ``$``)."""
    at = text.find(b"$", start + 1)
    while at >= 0 and not (text[at - 1] == 0x22 and text.startswith(b'part"', at + 1)):  # 0x22: '"'
        at = text.find(b"$", at + 1)
    return at - 1 if at >= 0 else -1


def _with_events(response: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """A response read with a compact stream, holding its events where a cassette without one holds them."""
    given = {key: value for key, value in response.items() if key not in (STREAM, "content_encoding")}
    given["events"] = events
    if "content_encoding" in response:
        given["content_encoding"] = response["content_encoding"]
    return given


def _who_of(data: dict[str, Any]) -> str:
    return f"exchange {data['id']}" if isinstance(data.get("id"), int) else "an exchange"


def _who(text: bytes) -> str:
    found = _ID.search(text)
    return f"exchange {int(found[1])}" if found else "an exchange"
