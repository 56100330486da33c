"""A streamed answer stored event by event, redacted as a whole.

A model that streams a key never sends it whole: it arrives split across ``text_delta``,
``input_json_delta``, Chat Completions ``delta.content`` or tool-call ``arguments``, Responses ``*.delta``,
Gemini ``parts``, Bedrock ``contentBlockDelta`` or Ollama ``message`` events, so no single event holds it.
Here each event is parsed (an SSE ``data:`` line, an NDJSON line, a WebSocket message, an AWS event-stream
message and the base64 chunk inside a Bedrock InvokeModel stream), the text it carries is found by its
shape (`deltas`) and joined per channel (one content block, one tool call's arguments, one choice), and the
secrets of the joined text are replaced: the placeholder goes where a secret starts and every other piece
of it is removed, so every event that held a piece changes, and the pieces still join to the redacted text.
Everything else in an event is redacted as any JSON document is — after one pass over all the events'
bytes for the catalogue's keywords: an event stored as its own bytes, none of which is a keyword, comes back
from the redactor unchanged, so it is not handed to it (most events of most streams; a 2,000-event stream
costs what parsing and storing its events cost, scripts/bench/redaction.py).

The codecs' stream decoders reassemble a completion but forget which event held which piece, which is what
the redaction must rewrite; the shapes here are the same wire fields they read.
"""

import base64
import binascii
import copy
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from llmproxy.cassette import secrets
from llmproxy.cassette.bodies import encode_sse
from llmproxy.cassette.model import Base64Event, Event, JsonLineEvent, MessageEvent, SseEvent, TextEvent
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_capture import Framing, framing
from llmproxy.errors import ParseError
from llmproxy.framing.eventstream import EventMessage, EventStreamDecoder, Header, encode_message
from llmproxy.model.exchange import RawEvent
from llmproxy.providers.node import Parsed

type Path = tuple[str | int, ...]
type Channel = tuple[Hashable, ...]
_WHOLE: Path = ()  # the piece is the whole event (chunks of a stream of unknown shape)


@dataclass(slots=True)
class _Parsed:
    """One event: its bytes, and the JSON document inside them that may carry text (None if there is none)."""

    t_ms: float
    data: bytes
    framing: Framing | None  # None: a WebSocket message
    doc: Any = None
    text: str | None = None  # the event as UTF-8 text, when it is
    exact: bool = False  # the stored parsed form (SseEvent, JsonLineEvent) gives back exactly these bytes
    name: str | None = None  # an SSE event's name
    head: str = ""  # verbatim text around the document (an SSE event in a form `SseEvent` cannot reproduce)
    tail: str = ""
    message: EventMessage | None = None  # an event-stream message
    outer: Any = None  # its JSON payload, when the document is the base64 chunk inside it
    clean: bool = False  # stored as its own bytes, none of them a keyword: the redactor would change nothing


def store_events(
    events: Sequence[RawEvent],
    content_type: str,
    redactor: Redactor,
    undecodable: str | None = None,
    *,
    messages: bool = False,
    payloads: list[Parsed] | None = None,
) -> list[Event]:
    """The stored, redacted form of a stream's events. `undecodable`: why the events are still
    content-encoded; each is stored verbatim, marked as never scanned. `messages`: the events are WebSocket
    messages (a Codex session's Responses events), stored as `bodies.store_message` would, but joined.
    `payloads`: given, it receives each event's JSON payload as parsed here, before redaction, when every
    event is an SSE event exactly as `encode_sse` writes it (one ``data:`` line of compact JSON): what a
    codec's stream reader reads of such a stream (`Answer.payloads`), so the audit does not parse it again."""
    if undecodable is not None:
        return [
            Base64Event(t_ms=round(e.t_ms, 3), base64=_b64(redactor.data(e.data)), not_decodable=undecodable)
            for e in events
        ]
    kind = None if messages else framing(content_type)
    parsed = [_parse(event, kind) for event in events]
    if payloads is not None and kind is Framing.SSE and all(event.exact for event in parsed):
        payloads.extend(Parsed(event.doc) for event in parsed)
    if not redactor.enabled:
        return [_store(event, {}, redactor) for event in parsed]
    finals, changed = _joined(parsed)
    _mark_clean(parsed, redactor)
    return [_store(event, finals.get(index, {}), redactor, index in changed) for index, event in enumerate(parsed)]


def deltas(doc: Any) -> Iterator[tuple[Channel, Path, str]]:
    """The streamed text an event's JSON carries: (channel, where in the document, the piece)."""
    if not isinstance(doc, dict):
        return
    kind = doc.get("type")
    if kind == "content_block_delta" and isinstance(delta := doc.get("delta"), dict):  # Anthropic, Bedrock invoke
        for field in ("text", "partial_json", "thinking"):
            if isinstance(delta.get(field), str):
                yield ("block", _key(doc.get("index")), field), ("delta", field), delta[field]
    elif isinstance(kind, str) and kind.endswith(".delta") and isinstance(doc.get("delta"), str):  # Responses
        where = (doc.get("item_id"), doc.get("output_index"), doc.get("content_index"), doc.get("summary_index"))
        yield ("responses", kind, *map(_key, where)), ("delta",), doc["delta"]
    elif isinstance(doc.get("choices"), list):  # Chat Completions
        yield from _chat(doc["choices"])
    elif isinstance(root := doc.get("response", doc), dict) and isinstance(root.get("candidates"), list):  # Gemini
        yield from _gemini(root["candidates"], ("response",) if root is not doc else ())
    elif "contentBlockIndex" in doc and isinstance(delta := doc.get("delta"), dict):  # Bedrock ConverseStream
        index = _key(doc["contentBlockIndex"])
        for field, path in _CONVERSE:
            if isinstance(piece := _get(delta, path), str):
                yield ("converse", index, field), ("delta", *path), piece
    else:  # Ollama: chat `message`, generate `response`
        if isinstance(message := doc.get("message"), dict):
            for field in ("content", "thinking"):
                if isinstance(message.get(field), str):
                    yield ("ollama", field), ("message", field), message[field]
        for field in ("response", "thinking"):
            if isinstance(doc.get(field), str):
                yield ("ollama", field), (field,), doc[field]


_CONVERSE: tuple[tuple[str, Path], ...] = (
    ("text", ("text",)),
    ("tool", ("toolUse", "input")),
    ("reason", ("reasoningContent", "text")),
)


def _chat(choices: list[Any]) -> Iterator[tuple[Channel, Path, str]]:
    for n, choice in enumerate(choices):
        if not isinstance(choice, dict) or not isinstance(delta := choice.get("delta"), dict):
            continue
        index = _key(choice.get("index", n))
        for field in ("content", "reasoning_content", "reasoning", "refusal"):
            if isinstance(delta.get(field), str):
                yield ("choice", index, field), ("choices", n, "delta", field), delta[field]
        calls = delta.get("tool_calls")
        for m, call in enumerate(calls if isinstance(calls, list) else []):
            if isinstance(call, dict) and isinstance(arguments := _get(call, ("function", "arguments")), str):
                path: Path = ("choices", n, "delta", "tool_calls", m, "function", "arguments")
                yield ("choice", index, "tool", _key(call.get("index", m))), path, arguments


def _gemini(candidates: list[Any], prefix: Path) -> Iterator[tuple[Channel, Path, str]]:
    for n, candidate in enumerate(candidates):
        parts = _get(candidate, ("content", "parts"))
        for m, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                channel = ("candidate", _key(candidate.get("index", n)), bool(part.get("thought")))
                yield channel, (*prefix, "candidates", n, "content", "parts", m, "text"), part["text"]


def _joined(parsed: list[_Parsed]) -> tuple[dict[int, dict[Path, str]], set[int]]:
    """Per event, the final text of each piece it carries: the channel's redacted text, cut where it was; and
    the events where that differs from the piece."""
    channels: dict[Channel, list[tuple[int, Path, str]]] = {}
    for index, event in enumerate(parsed):
        if event.framing is Framing.CHUNKS and event.text is not None:  # a stream of unknown shape: one text
            channels.setdefault(("chunks",), []).append((index, _WHOLE, event.text))
        for channel, path, piece in deltas(event.doc):
            channels.setdefault(channel, []).append((index, path, piece))
    finals: dict[int, dict[Path, str]] = {}
    changed: set[int] = set()
    for pieces in channels.values():
        joined = "".join(piece for _, _, piece in pieces)
        found = list(secrets.find(joined))
        start = 0
        for index, path, piece in pieces:
            end = start + len(piece)
            final = _cut(joined, start, end, found) if found else piece
            finals.setdefault(index, {})[path] = final
            if final != piece:
                changed.add(index)
            start = end
    return finals, changed


def _mark_clean(parsed: list[_Parsed], redactor: Redactor) -> None:
    """Mark the events stored as their own bytes (a parsed form that re-encodes to them exactly, or their
    text) that overlap none of the keywords in one scan of all such events: the redactor scans what it is
    given for those keywords first, and finds none in any part of them."""
    own = [event for event in parsed if event.text is not None and (event.doc is None or event.exact)]
    keywords = iter(redactor.keywords(b"".join(event.data for event in own)))
    keyword = next(keywords, None)
    start = 0
    for event in own:
        end = start + len(event.data)
        while keyword is not None and keyword[1] <= start:
            keyword = next(keywords, None)
        event.clean = keyword is None or keyword[0] >= end
        start = end


def _cut(joined: str, start: int, end: int, found: list[secrets.Found]) -> str:
    """The piece joined[start:end] redacted: a secret's placeholder where the secret starts, nothing for the
    parts of a secret that started in an earlier piece."""
    out, cursor = [], start
    for secret in found:
        if secret.end <= start or secret.start >= end:
            continue
        if secret.start > cursor:
            out.append(joined[cursor : secret.start])
        if secret.start >= start:
            out.append(secrets.placeholder(secret.secret, secret.kind))
        cursor = max(cursor, min(secret.end, end))
    out.append(joined[cursor:end])
    return "".join(out)


# -- parsing ------------------------------------------------------------------------------------------


def _parse(event: RawEvent, kind: Framing | None) -> _Parsed:
    parsed = _Parsed(event.t_ms, event.data, kind)
    if kind is Framing.EVENTSTREAM:
        _message(parsed)
        return parsed
    if kind is None:  # a WebSocket message: binary, or text that may be JSON
        if not event.binary:
            parsed.text = event.data.decode("utf-8", "replace")
            parsed.doc = _json(event.data)
            parsed.exact = parsed.doc is not None and orjson.dumps(parsed.doc) == event.data
        return parsed
    try:
        parsed.text = event.data.decode()
    except UnicodeDecodeError:
        return parsed
    if kind is Framing.SSE:
        _sse(parsed, parsed.text)
    elif kind is Framing.LINES:
        _line(parsed, parsed.text)
    return parsed


def _sse(parsed: _Parsed, text: str) -> None:
    rest = text
    if rest.startswith("event: "):
        line, newline, rest = rest.partition("\n")
        parsed.name = line[7:] if newline else None
    if rest.startswith(("data: {", "data: [")):
        value = _json(rest[6:].encode())
        if value is not None and encode_sse(parsed.name, value) == parsed.data:
            parsed.doc, parsed.exact = value, True
            return
    parsed.name = None
    lines = text.splitlines(keepends=True)
    data = [n for n, line in enumerate(lines) if line.startswith("data:")]
    if len(data) != 1:
        return
    line = lines[data[0]]
    body = line[5:].removeprefix(" ")
    payload = body.rstrip("\r\n")
    value = _json(payload.encode())
    if value is not None:
        parsed.doc = value
        parsed.head = "".join(lines[: data[0]]) + line[: len(line) - len(body)]
        parsed.tail = body[len(payload) :] + "".join(lines[data[0] + 1 :])


def _line(parsed: _Parsed, text: str) -> None:
    value = _json(parsed.data)
    if value is None:
        return
    parsed.doc = value
    parsed.exact = orjson.dumps(value) + b"\n" == parsed.data
    parsed.tail = text[len(text.rstrip("\r\n")) :]


def _message(parsed: _Parsed) -> None:
    try:
        messages = EventStreamDecoder().feed(parsed.data)
    except ParseError:
        return
    if len(messages) != 1:
        return
    parsed.message = messages[0]
    payload = _json(messages[0].payload)
    if isinstance(payload, dict) and isinstance(payload.get("bytes"), str):  # InvokeModel: a JSON chunk in base64
        try:
            inner = _json(base64.b64decode(payload["bytes"], validate=True))
        except binascii.Error:
            inner = None
        if inner is not None:
            parsed.outer, parsed.doc = payload, inner
            return
    parsed.doc = payload


# -- storing ------------------------------------------------------------------------------------------


_UNCHANGED = Redactor(enabled=False)


def _store(event: _Parsed, finals: dict[Path, str], redactor: Redactor, joined_changed: bool = False) -> Event:
    """`joined_changed`: a piece's final text differs from what the event carries."""
    t_ms = round(event.t_ms, 3)
    if event.clean:
        redactor = _UNCHANGED
        if not joined_changed:
            finals = {}
    doc, changed = _redacted_doc(event.doc, finals, redactor) if event.doc is not None else (None, False)
    if event.message is not None:
        return Base64Event(t_ms=t_ms, base64=_b64(_message_bytes(event, doc, changed, redactor)))
    if event.text is None:
        return Base64Event(t_ms=t_ms, base64=_b64(redactor.data(event.data)))
    if event.doc is None:
        return TextEvent(t_ms=t_ms, text=finals.get(_WHOLE, redactor.text(event.text)))
    if event.framing is None:
        if event.exact:
            return MessageEvent(t_ms=t_ms, message=doc)
        return TextEvent(t_ms=t_ms, text=orjson.dumps(doc).decode() if changed else event.text)
    if event.exact and event.framing is Framing.SSE:
        name = redactor.text(event.name) if event.name is not None else None
        return SseEvent(t_ms=t_ms, event=name, data=doc) if name is not None else SseEvent(t_ms=t_ms, data=doc)
    if event.exact:
        return JsonLineEvent(t_ms=t_ms, json=doc)
    if event.framing is Framing.LINES:
        text = orjson.dumps(doc).decode() + event.tail if changed else event.text
        return TextEvent(t_ms=t_ms, text=text)
    body = orjson.dumps(doc).decode() if changed else event.text[len(event.head) : len(event.text) - len(event.tail)]
    return TextEvent(t_ms=t_ms, text=redactor.text(event.head) + body + redactor.text(event.tail))


def _redacted_doc(doc: Any, finals: dict[Path, str], redactor: Redactor) -> tuple[Any, bool]:
    """The document redacted, its pieces set to their final text; and whether anything changed."""
    redacted = redactor.json(doc)
    if redacted is doc:
        if all(_get(doc, path) == text for path, text in finals.items()):
            return doc, False
        redacted = copy.deepcopy(doc)
    for path, text in finals.items():
        _set(redacted, path, text)
    return redacted, redacted != doc


def _message_bytes(event: _Parsed, doc: Any, changed: bool, redactor: Redactor) -> bytes:
    """The event-stream message re-encoded (lengths and CRCs anew) around its redacted payload."""
    message = event.message
    assert message is not None
    if event.outer is not None:  # the document is the base64 chunk: redact around it, then put it back
        outer = {k: v for k, v in event.outer.items() if k != "bytes"}
        redacted_outer = redactor.json(outer)
        chunk = _b64(orjson.dumps(doc)) if changed else event.outer["bytes"]
        if changed or (redacted_outer is not outer and redacted_outer != outer):
            rest = iter(redacted_outer.items())  # the order sent, the chunk where it was
            payload = orjson.dumps(dict(("bytes", chunk) if key == "bytes" else next(rest) for key in event.outer))
        else:
            payload = message.payload
    elif event.doc is not None:
        payload = orjson.dumps(doc) if changed else message.payload
    else:
        payload = redactor.data(message.payload)
    headers = tuple(
        Header(h.name, redactor.text(h.value), h.type) if isinstance(h.value, str) else h for h in message.headers
    )
    if payload == message.payload and headers == message.headers:
        return event.data
    return encode_message(EventMessage(headers, payload))


# -- helpers ------------------------------------------------------------------------------------------


def _json(data: bytes) -> Any:
    if data.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _key(value: Any) -> Hashable:
    return value if isinstance(value, int | str | None) else repr(value)


def _get(value: Any, path: Path) -> Any:
    for step in path:
        if isinstance(step, str) and isinstance(value, dict):
            value = value.get(step)
        elif isinstance(step, int) and isinstance(value, list) and step < len(value):
            value = value[step]
        else:
            return None
    return value


def _set(value: Any, path: Path, text: str) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = text


def _b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode("ascii")
