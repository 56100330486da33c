"""`llmproxy cassette check`: find anything secret left in files meant to be committed.

The check redacts each file again, as recording would, and reports every place where that would change
something: it knows exactly the kinds the redactor knows, from the same catalogue. A cassette or a journal
is redacted exchange by exchange as the recorder stores one: headers by name, the URL's query, bodies by
type (base64 ones decoded first, and their content encoding undone when they still carry one: a
hand-written or imported cassette may keep a body as it was on the wire), stream events joined per content
block, tool call or choice (so a key split across deltas is found) with Bedrock's base64 chunks decoded.
A body or stream stored "not decodable" is a finding too: its content was never scanned. Any other JSON
document is redacted as JSON (secret fields at any depth, secrets in every string, ``"name: value"`` header
lines and ``[name, value]`` pairs); anything else line by line as text. Secrets are shown masked.

A file that cannot be scanned as what it is is not checked, and said so (`CassetteError`): read as text, its
bodies, streams and headers would not be redacted as the recorder redacts them, and "no secret-looking
values" would not be true. That is a file with merge conflict markers, a `.json` file that is not JSON, and
a cassette or journal that replay could not read — each is read first by the store's own reader
(`files.read_file_alone`: cut short, another version, a string where a number belongs).
"""

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import TypeAdapter, ValidationError

from llmproxy.cassette import secrets
from llmproxy.cassette.bodies import event_bytes, is_binary_message
from llmproxy.cassette.decoding import decode_body
from llmproxy.cassette.files import invalid_json, read_file_alone
from llmproxy.cassette.history import inflate
from llmproxy.cassette.model import Event, dump, header_pairs
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.stream_redact import store_events
from llmproxy.cassette.streams import EVENTS, STREAM, StreamError, expand_stream
from llmproxy.errors import CassetteError
from llmproxy.model.exchange import RawEvent
from llmproxy.words import plural

_KIND = re.compile(r"<redacted:([a-z0-9\-]{1,32}):[0-9a-f]{8}>")
_CASSETTE_START = re.compile(rb'\s*\{\s*"llmproxy_cassette"')
_CONFLICT = re.compile(rb"^(<{7}|>{7}|\|{7})( |\r?$)", re.MULTILINE)
_EVENTS: TypeAdapter[list[Event]] = TypeAdapter(list[Event])


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A place the check flags: a secret redaction would replace, or a body stored "not decodable" (never
    scanned). `outputs/check.py`'s `Finding` is its form in `--json`."""

    file: Path
    where: str  # a JSON path, or "line N"
    kind: str
    masked: str

    def __str__(self) -> str:
        return f"{self.file}:{self.where}: {self.kind}: {self.masked}"


type Scanned = Literal["cassette", "journal", "JSON document", "text"]


@dataclass(frozen=True, slots=True)
class FileCheck:
    """What one file was scanned as, how much of it, and what was found."""

    file: Path
    kind: Scanned
    exchanges: int  # the exchanges scanned (a cassette or journal); 0 for other files
    findings: list[SecretFinding]

    def describe(self) -> str:
        if self.kind in ("cassette", "journal"):
            return f"{self.file} ({self.kind}, {plural(self.exchanges, 'exchange')})"
        return f"{self.file} ({self.kind})"


def check_file(path: Path, redactor: Redactor | None = None) -> FileCheck:
    """Scan one file. Raises OSError when it cannot be read, CassetteError when it cannot be scanned as what it
    is (the reason, without the file's name)."""
    redactor = redactor or Redactor()
    data = path.read_bytes()
    if (line := _conflict_marker(data)) is not None:
        raise CassetteError(f"merge conflict markers at line {line}")
    if _is_journal(path, data):
        _read_as_stored(path, journal=True)
        return _lines(path, data, redactor, "journal")
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        if _meant_as_json(path, data):
            raise CassetteError(invalid_json(error)) from None
        return _lines(path, data, redactor, "text")
    if isinstance(document, dict) and "llmproxy_cassette" in document:
        _read_as_stored(path, journal=False)
    found = [SecretFinding(path, where, kind, masked) for where, kind, masked in _document(document, "$", redactor)]
    if _is_cassette(document):
        return FileCheck(path, "cassette", len(document["exchanges"]), found)
    return FileCheck(path, "JSON document", 0, found)


def _read_as_stored(path: Path, journal: bool) -> None:
    """Read the file as replay and recording read it (`files.read_file_alone`), its shared histories resolved
    (a journal's may extend its cassette's). Raises CassetteError with the reason alone."""
    try:
        exchanges = read_file_alone(path, journal)
        if not journal:
            inflate(exchanges)
    except CassetteError as error:
        raise CassetteError(str(error).removeprefix(f"{path}: ")) from None
    except ValueError as error:  # a history that cannot be resolved
        raise CassetteError(str(error)) from None


def _lines(path: Path, data: bytes, redactor: Redactor, kind: Literal["journal", "text"]) -> FileCheck:
    """A journal or a text file, line by line: a line of JSON as JSON (a journal's exchange as the recorder stores
    one), any other as text — a journal's unfinished last line too."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    findings: list[SecretFinding] = []
    exchanges = 0
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            parsed = orjson.loads(line)
        except orjson.JSONDecodeError:
            spots = _diff(line, _header_line(redactor.text(line), redactor), f"line {number}")
        else:
            exchanges += _is_journal_line(parsed)
            spots = _document(parsed, f"line {number}: $", redactor)
        findings += [SecretFinding(path, where, kind, masked) for where, kind, masked in spots]
    return FileCheck(path, kind, exchanges, findings)


def _conflict_marker(data: bytes) -> int | None:
    """The line of the first merge conflict marker git left in the file (`<<<<<<< HEAD`), if any."""
    found = _CONFLICT.search(data)
    return data.count(b"\n", 0, found.start()) + 1 if found is not None else None


def _is_journal(path: Path, data: bytes) -> bool:
    """A recording's journal: by its name, or by its header line."""
    if path.name.endswith(".journal"):
        return True
    try:
        header = orjson.loads(data.split(b"\n", 1)[0])
    except orjson.JSONDecodeError:
        return False
    return isinstance(header, dict) and "llmproxy_journal" in header


def _meant_as_json(path: Path, data: bytes) -> bool:
    """A file that is not JSON as a whole, but should be: a cassette's start, or a `.json` name."""
    return path.suffix == ".json" or bool(_CASSETTE_START.match(data))


def _is_cassette(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("exchanges"), list) and "llmproxy_cassette" in value


def _is_journal_line(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("request"), dict) and "id" in value


def _document(value: Any, where: str, redactor: Redactor) -> Iterator[tuple[str, str, str]]:
    if _is_cassette(value):
        for index, exchange in enumerate(value["exchanges"]):
            yield from _exchange(exchange, f"{where}.exchanges[{index}]", redactor)
    elif _is_journal_line(value):
        yield from _exchange(value, where, redactor)
    else:
        yield from _diff(value, _loose(redactor.json(value), redactor), where)


def _exchange(stored: Any, where: str, redactor: Redactor) -> Iterator[tuple[str, str, str]]:
    if not isinstance(stored, dict):
        yield from _diff(stored, _loose(redactor.json(stored), redactor), where)
        return
    for key, value in stored.items():
        here = f"{where}.{key}"
        if key in ("request", "response") and isinstance(value, dict):
            yield from _part(value, here, redactor, messages="websocket" in stored)
        else:
            yield from _diff(value, redactor.json(value), here)


def _part(part: dict[str, Any], where: str, redactor: Redactor, messages: bool) -> Iterator[tuple[str, str, str]]:
    """`messages`: the events are WebSocket messages."""
    headers = part.get("headers")
    lines = headers if isinstance(headers, list) and all(isinstance(h, str) for h in headers) else None
    content_type = next((v for n, v in header_pairs(lines or []) if n.lower() == "content-type"), "")
    declared = next((v for n, v in header_pairs(lines or []) if n.lower() == "content-encoding"), None)
    encoding = part.get("content_encoding") if isinstance(part.get("content_encoding"), str) else declared
    for key, value in part.items():
        here = f"{where}.{key}"
        if key == "headers" and lines is not None:
            redacted: Any = [_header_line(line, redactor, strict=False) for line in lines]
        elif key == "url" and isinstance(value, str):
            redacted = _url(value, redactor)
        elif key == "body" and isinstance(value, dict):
            if value.get("not_decodable"):
                yield here, "not decodable", str(value["not_decodable"])
                continue
            if (decoded := _still_encoded(value, encoding)) is not None:  # scanned as the recorder would see it
                yield from _diff(decoded, redactor.text(decoded), here)
                continue
            redacted = _body(value, redactor)
        elif key in ("events", STREAM) and isinstance(value, list | dict):
            if key == STREAM:  # its events as the recorder stored them, found where the stream holds them
                try:
                    value, here = expand_stream(value), f"{here}.{EVENTS}"
                except StreamError as error:
                    raise CassetteError(str(error).removeprefix("$.response.")) from None
            undecodable = [e for e in value if isinstance(e, dict) and e.get("not_decodable")]
            if undecodable:
                yield here, "not decodable", str(undecodable[0]["not_decodable"])
                continue
            redacted = _events(value, content_type, redactor, messages)
        else:
            redacted = redactor.json(value)
        yield from _diff(value, redacted, here)


def _url(url: str, redactor: Redactor) -> str:
    scheme, slashes, rest = url.partition("://")
    if not slashes:
        return redactor.path(url)
    host, slash, path = rest.partition("/")
    return f"{scheme}://{redactor.text(host)}{redactor.path(slash + path)}"


def _body(body: dict[str, Any], redactor: Redactor) -> Any:
    if "json" in body:
        return {**body, "json": redactor.json(body["json"])}
    if isinstance(body.get("text"), str):
        return {**body, "text": redactor.text(body["text"])}
    if isinstance(body.get("base64"), str):
        try:
            data = base64.b64decode(body["base64"], validate=True)
        except binascii.Error:
            return body
        return {**body, "base64": base64.b64encode(redactor.data(data)).decode("ascii")}
    return redactor.json(body)


def _still_encoded(body: dict[str, Any], encoding: str | None) -> str | None:
    """A base64 body kept as it was on the wire, still content-encoded (a hand-written or imported cassette;
    the recorder stores bodies decoded), as the text it decodes to; None for any other body."""
    if not encoding or not isinstance(body.get("base64"), str):
        return None
    try:
        data = base64.b64decode(body["base64"], validate=True)
    except binascii.Error:
        return None
    decoded, failed = decode_body(data, encoding)
    return None if failed is not None else decoded.decode("utf-8", "replace")


def _events(stored: list[Any], content_type: str, redactor: Redactor, messages: bool) -> Any:
    """The events redacted again as the recorder redacts a stream: joined, not one by one."""
    try:
        events = _EVENTS.validate_python(stored)
        raw = [RawEvent(e.t_ms, event_bytes(e), messages and is_binary_message(e)) for e in events]
    except (ValidationError, ValueError):
        return redactor.json(stored)
    return [dump(event) for event in store_events(raw, content_type, redactor, messages=messages)]


def _loose(value: Any, redactor: Redactor) -> Any:
    """Header lines and [name, value] pairs in a document that is not a cassette, redacted as headers."""
    if isinstance(value, str):
        return _header_line(value, redactor)
    if isinstance(value, list):
        if len(value) == 2 and all(isinstance(item, str) for item in value) and secrets.is_secret_header(value[0]):
            return [value[0], redactor.header(value[0], value[1])] if value[1] else value
        return [_loose(item, redactor) for item in value]
    if isinstance(value, dict):
        return {key: _loose(item, redactor) for key, item in value.items()}
    return value


def _header_line(text: str, redactor: Redactor, strict: bool = True) -> str:
    """A ``name: value`` line redacted as a header; in text (`strict`), only a secret header's line is taken
    for one, and the rest is left to the text rules."""
    name, colon, value = text.partition(": ")
    if not colon or not value:
        return text
    if strict and ("\n" in text or " " in name or not secrets.is_secret_header(name)):
        return text
    return f"{name}: {redactor.header(name, value)}"


def _diff(old: Any, new: Any, where: str) -> Iterator[tuple[str, str, str]]:
    """Where redacting changed something: the kind of each new placeholder, and the old value masked."""
    if isinstance(old, dict) and isinstance(new, dict) and len(old) == len(new):
        for (old_key, old_value), (new_key, new_value) in zip(old.items(), new.items(), strict=True):
            if old_key != new_key:
                yield from _changed(old_key, new_key, where)
            yield from _diff(old_value, new_value, f"{where}.{old_key}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (old_item, new_item) in enumerate(zip(old, new, strict=True)):
            yield from _diff(old_item, new_item, f"{where}[{index}]")
    elif old != new:
        yield from _changed(old, new, where)


def _changed(old: Any, new: Any, where: str) -> Iterator[tuple[str, str, str]]:
    old_text = old if isinstance(old, str) else orjson.dumps(old).decode()
    new_text = new if isinstance(new, str) else orjson.dumps(new).decode()
    known = set(_KIND.findall(old_text))
    kinds = [kind for kind in _KIND.findall(new_text) if kind not in known] or ["secret"]
    found = list(secrets.find(old_text))
    if len(found) == len(kinds):
        yield from ((where, found.kind, secrets.mask(found.secret)) for found in found)
        return
    start = next((i for i, (a, b) in enumerate(zip(old_text, new_text, strict=False)) if a != b), 0)
    end = next((i for i, (a, b) in enumerate(zip(old_text[::-1], new_text[::-1], strict=False)) if a != b), 0)
    middle = old_text[start : len(old_text) - end] or old_text
    for kind in dict.fromkeys(kinds):
        yield where, kind, secrets.mask(middle)
