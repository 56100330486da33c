"""Reading and writing cassette files: the envelope, the journal beside it, atomic replacement.

The cassette is one JSON document, ``{"llmproxy_cassette": 1, "exchanges": [...]}``, indented by two
spaces, UTF-8, ending in a newline. While recording, each finished exchange is also appended as one JSON
line to ``<cassette>.journal`` (after a header line, ``{"llmproxy_journal": 1, "owner": …}``), so a killed
recorder loses only the exchanges in flight. Readers merge a leftover journal: its exchanges whose ids the
cassette already has were merged before (the recorder died between replacing the cassette and deleting the
journal). The journal of ``--record-mode rewrite`` says ``"rewrite": "started"`` once its run began cleanly:
then it replaces the cassette's exchanges instead; ``"pending"`` (the run never began) and an empty journal
(the recorder died starting) are ignored. A pending append (the pytest plugin's: a test's recording joins its
cassette only once the test is over and its recording whole) says ``"append": "pending"``, ignored in the
same way, until ``"append": "started"``.
"""

import contextlib
import logging
import os
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from llmproxy.cassette.history import history, with_list
from llmproxy.cassette.model import VERSION, Cassette, Exchange
from llmproxy.cassette.parts import PARTS, PartError, Parts
from llmproxy.cassette.streams import EVENTS, STREAM, T_MS
from llmproxy.errors import CassetteError

logger = logging.getLogger(__name__)

JOURNAL_VERSION = 1
PENDING, STARTED = "pending", "started"  # a journal's "rewrite" or "append": whether its exchanges count yet


def journal_path(path: Path) -> Path:
    return path.with_name(path.name + ".journal")


def cassette_exists(path: Path) -> bool:
    """A cassette, or the journal of one still being written — one whose exchanges count: not a pending
    recording's (`journal_counts`)."""
    return path.exists() or journal_counts(journal_path(path))


def journal_counts(journal: Path) -> bool:
    """Whether what a journal holds is part of its cassette: not when its header says the recording is pending
    (a rewrite whose run never started, a test's recording never kept) or was never written whole."""
    try:
        with journal.open("rb") as handle:
            first = handle.readline()
    except OSError:
        return False
    if not first.endswith(b"\n"):
        return False
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        return True  # reading it says what is wrong
    return not pending(header)


def pending(header: object) -> bool:
    """A journal header whose recording does not count yet."""
    return isinstance(header, dict) and PENDING in (header.get("rewrite"), header.get("append"))


def encode_cassette(exchanges: list[dict[str, Any]]) -> bytes:
    """The whole file, as `PendingCassette` writes it."""
    if not exchanges:
        return b'{\n  "llmproxy_cassette": %d,\n  "exchanges": []\n}\n' % VERSION
    listed = b",\n    ".join(encode_exchange(exchange) for exchange in exchanges)
    return b'{\n  "llmproxy_cassette": %d,\n  "exchanges": [\n    %s\n  ]\n}\n' % (VERSION, listed)


def encode_exchange(exchange: dict[str, Any]) -> bytes:
    """One exchange as the cassette lays it out, indented for its place in the list: one value per line, except
    each shared part and each stream event's fields, one line of compact JSON each (a tool definition is one line
    of the diff when it changes, an event's timing is a line of its own, and deep JSON does not pay for its
    indentation), and a reference to a part, ``{"$part": "…"}``, on one line; a compact stream (`streams.py`) has
    its timings on one line and each event on one."""
    parts = exchange.get(PARTS)
    response = exchange.get("response")
    events = response.get("events") if isinstance(response, dict) else None
    shown = exchange
    if parts:
        shown = {**shown, PARTS: {}}
    if events:
        shown = {**shown, "response": {**response, "events": []}}  # type: ignore[dict-item]
    stream = response.get(STREAM) if isinstance(response, dict) else None
    if stream:
        shown = {**shown, "response": {**response, STREAM: {}}}  # type: ignore[dict-item]
    conversation = _conversation(exchange)
    if conversation is not None:
        request, path, items = conversation
        body = {**request["body"], "json": with_list(request["body"]["json"], path, [])}
        shown = {**shown, "request": {**request, "body": body}}
    text = orjson.dumps(shown, option=orjson.OPT_INDENT_2)
    # The exchange's own fields are indented by two, its request's and response's by four: deeper ones by more.
    if parts:
        lines = b",\n".join(
            b"    %s: %s" % (orjson.dumps(ident), orjson.dumps(value)) for ident, value in parts.items()
        )
        text = text.replace(b'\n  "%s": {}' % PARTS.encode(), b'\n  "%s": {\n%s\n  }' % (PARTS.encode(), lines), 1)
    if events:
        listed = b",\n".join(_event(event) for event in events)
        text = text.replace(b'\n    "events": []', b'\n    "events": [\n%s\n    ]' % listed, 1)
    if stream:
        listed = b",\n".join(b"        %s" % orjson.dumps(item) for item in stream[EVENTS])
        text = text.replace(
            b'\n    "%s": {}' % STREAM.encode(),
            b'\n    "%s": {\n      "%s": %s,\n      "%s": [\n%s\n      ]\n    }'
            % (STREAM.encode(), T_MS.encode(), orjson.dumps(stream[T_MS]), EVENTS.encode(), listed),
            1,
        )
    if conversation is not None:
        _, path, items = conversation
        indent = b" " * (6 + 2 * len(path))  # the keys of the request body's JSON are indented by eight
        listed = b",\n".join(b"%s  %s" % (indent, orjson.dumps(item)) for item in items)
        key = b"\n%s%s: []" % (indent, orjson.dumps(path[-1]))
        text = text.replace(key, b"%s: [\n%s\n%s]" % (key[:-4], listed, indent), 1)
    return _SPREAD_REFERENCE.sub(rb'{"$part": \1}', text).replace(b"\n", b"\n    ")


# A reference as orjson indents it (JSON strings hold no raw newline: only an object can match).
_SPREAD_REFERENCE = re.compile(rb'\{\n *"\$part": ("[0-9a-f]{12}")\n *\}')


def _conversation(exchange: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...], list[Any]] | None:
    """The request, the path and the items of a stored request's non-empty history list (`history.history`)."""
    request = exchange.get("request")
    body = request.get("body") if isinstance(request, dict) else None
    json_ = body.get("json") if isinstance(body, dict) else None
    found = history(json_) if isinstance(json_, dict) else None
    if found is None or not found[1]:
        return None
    return request, found[0], found[1]  # type: ignore[return-value]


def _event(event: dict[str, Any]) -> bytes:
    fields = b",\n".join(b"        %s: %s" % (orjson.dumps(key), orjson.dumps(value)) for key, value in event.items())
    return b"      {\n%s\n      }" % fields


class PendingCassette:
    """The cassette being written beside the old one, exchange by exchange as they are recorded, so memory
    holds none of them and closing costs no re-encoding: `commit` ends it and replaces the old file
    atomically. The bytes are exactly `encode_cassette`'s."""

    def __init__(self, path: Path, exchanges: Iterable[dict[str, Any]] = ()) -> None:
        """Raises OSError when the file cannot be created or written."""
        self.path = path
        self._temp = _temp(path)
        self._handle = self._temp.open("wb")
        self._count = 0
        self._handle.write(b'{\n  "llmproxy_cassette": %d,\n  "exchanges": [' % VERSION)
        for exchange in exchanges:
            self.append(exchange)

    def append(self, exchange: dict[str, Any]) -> None:
        """Raises OSError (a full disk): the exchange is then still in the journal."""
        self._handle.write((b",\n    " if self._count else b"\n    ") + encode_exchange(exchange))
        self._count += 1

    def commit(self) -> None:
        """Finish the file, make it durable and put it in place. Raises CassetteError."""
        try:
            self._handle.write(b"\n  ]\n}\n" if self._count else b"]\n}\n")
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            os.replace(self._temp, self.path)
        except OSError as exc:
            self.abort()
            raise CassetteError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        _fsync_dir(self.path.parent)

    def abort(self) -> None:
        with contextlib.suppress(OSError):  # what it still buffered cannot be written (a full disk): it goes
            self._handle.close()
        self._temp.unlink(missing_ok=True)


def _temp(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def temporaries(path: Path) -> list[tuple[Path, int]]:
    """The temporary files beside `path` that a writer of it made (`_temp`), each with the id of the process
    that made it."""
    prefix, suffix = f".{path.name}.", ".tmp"
    try:
        names = [entry.name for entry in os.scandir(path.parent)]
    except OSError:
        return []
    found = []
    for name in sorted(names):
        pid = name[len(prefix) : -len(suffix)] if name.startswith(prefix) and name.endswith(suffix) else ""
        if pid.isdecimal() and pid.isascii():
            found.append((path.with_name(name), int(pid)))
    return found


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that readers see the old file or the new one, never a mix."""
    temp = _temp(path)
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise CassetteError(f"cannot write {path}: {exc.strerror or exc}") from None
    _fsync_dir(path.parent)


def read_exchanges(path: Path) -> list[Exchange]:
    """The exchanges as stored (histories still shared), cassette then journal. Raises CassetteError."""
    return _read_exchanges(path, Exchange.model_validate)


def read_stored(path: Path) -> list[dict[str, Any]]:
    """The exchanges as `read_exchanges` reads them, each checked against the model but kept as the parsed
    JSON it came from: the models of a 10,000-exchange cassette would take more memory than the JSON itself
    (`cassette/recorded.py` makes them when they are read). Raises CassetteError."""
    return _read_exchanges(path, _checked)


def read_file_alone(path: Path, journal: bool) -> list[Exchange]:
    """The exchanges of one file as `read_exchanges` reads it, without the rest of its recording: a cassette
    without the journal beside it, or a `journal` without its cassette — what `cassette check` is given to
    check. Raises CassetteError."""
    if journal:
        parts = Parts()
        cassette = path.with_name(path.name.removesuffix(".journal"))
        if cassette != path and cassette.exists():  # the parts its exchanges may refer to
            _read_cassette(cassette, lambda data: None, parts)
        _, journalled = _read_journal(path, Exchange.model_validate, parts)
        return [exchange for _, exchange in journalled]
    return [exchange for _, exchange in _read_cassette(path, Exchange.model_validate, Parts())]


def _checked(data: Any) -> dict[str, Any]:
    Exchange.model_validate(data)  # a model made and dropped at once: only the check is kept
    checked: dict[str, Any] = data
    return checked


type Make[T] = Callable[[Any], T]  # an exchange's JSON checked, and what is kept of it


def _read_exchanges[T](path: Path, make: Make[T]) -> list[T]:
    return [kept for _, kept in _read_pairs(path, make)]


def _read_pairs[T](path: Path, make: Make[T]) -> list[tuple[int, T]]:
    """Each exchange's id and what `make` keeps of it, cassette then journal, the ids checked."""
    journal = journal_path(path)
    if not path.exists() and not journal.exists():
        raise CassetteError(f"{path}: no such cassette")
    parts = Parts()  # the journal's exchanges may refer to the cassette's parts
    exchanges = _read_cassette(path, make, parts) if path.exists() else []
    if journal.exists():
        rewrite, journalled = _read_journal(journal, make, parts)
        if rewrite == STARTED:
            exchanges = journalled
        elif rewrite is None:
            known = {exchange_id for exchange_id, _ in exchanges}
            exchanges += [(exchange_id, kept) for exchange_id, kept in journalled if exchange_id not in known]
    last = 0
    for exchange_id, _ in exchanges:
        if exchange_id <= last:
            raise CassetteError(f"{path}: exchange ids must increase in file order: {exchange_id} after {last}")
        last = exchange_id
    return exchanges


def iter_exchanges(path: Path) -> Iterator[Exchange]:
    """`read_exchanges` one exchange at a time, so a reader of a long recording holds one exchange, not the
    whole file's parsed form (several times the file's size while parsing). A cassette laid out as llmproxy
    writes it is parsed exchange by exchange; a file in any other layout, or with a journal beside it, is read
    whole. Raises CassetteError, as `read_exchanges` would (possibly after yielding earlier exchanges)."""
    return _one_at_a_time(path, Exchange.model_validate)


def iter_stored(path: Path) -> Iterator[dict[str, Any]]:
    """`read_stored` one exchange at a time, as `iter_exchanges` reads them: a replay serves the first exchanges
    of a long cassette while the rest are still being read."""
    return _one_at_a_time(path, _checked)


def _one_at_a_time[T](path: Path, make: Make[T]) -> Iterator[T]:
    if journal_path(path).exists() or not path.exists():
        yield from _read_exchanges(path, make)
        return
    last = 0
    stream = one_by_one(path, make)
    while True:
        try:
            exchange_id, exchange = next(stream)
        except StopIteration as stop:
            if stop.value:
                return
            break  # not llmproxy's layout after all, or something in it is wrong: the whole file says what
        if exchange_id <= last:
            raise CassetteError(f"{path}: exchange ids must increase in file order: {exchange_id} after {last}")
        last = exchange_id
        yield exchange
    yield from (exchange for exchange_id, exchange in _read_pairs(path, make) if exchange_id > last)


_OPENING = b'{\n  "llmproxy_cassette": %d,\n  "exchanges": [' % VERSION
_NEXT = b"\n    {"  # an exchange opens on its own line, indented by four spaces (its fields by six or more)
_CLOSE = b"\n    }"  # and closes so: JSON strings hold no raw newline, so this ends the exchange it follows
_CLOSINGS = (b"\n  ]\n}\n", b"\n  ]\n}", b"]\n}\n", b"]\n}")  # after the last exchange, or when there is none
CHUNK = 1 << 20  # bytes `one_by_one` reads at a time, at most (a pipe gives what was written so far)


def one_by_one[T](path: Path, make: Make[T], parts: Parts | None = None) -> Generator[tuple[int, T], None, bool]:
    """The exchanges of a cassette in `encode_cassette`'s layout, each parsed and checked alone (its id and
    what `make` keeps of it), read a chunk at a time; returns True when the whole file was read so, False as
    soon as it is not in that layout or an exchange does not parse or validate (the caller then reads the
    file whole). `parts`: those of the exchanges read so far (a reader's own, else a new one's)."""
    parts = Parts() if parts is None else parts
    try:
        with path.open("rb") as handle:
            data = handle.read1(CHUNK)
            if not data.startswith(_OPENING):
                return False
            at, count = len(_OPENING), 0
            while True:
                while len(data) - at < len(_NEXT) + 1 and (more := handle.read1(CHUNK)):
                    data, at = data[at:] + more, 0
                if len(data) - at <= len(_CLOSINGS[0]) and data[at:] in _CLOSINGS:
                    return not handle.read(1)
                if count:
                    if not data.startswith(b",", at):
                        return False
                    at += 1
                if not data.startswith(_NEXT, at):
                    return False
                start = at + len(_NEXT) - 1
                end = data.find(_CLOSE, start)
                while end < 0:  # a long exchange: read as much again, and search only what is new
                    more = handle.read1(max(CHUNK, len(data) - start))
                    if not more:
                        return False
                    searched = len(data) - start - len(_CLOSE) + 1
                    data, start = data[start:] + more, 0
                    end = data.find(_CLOSE, max(0, searched))
                at = end + len(_CLOSE)
                try:
                    made = _kept(make, _read_exchange(parts, data, start, at, path))
                except (orjson.JSONDecodeError, ValidationError):
                    return False
                count += 1
                yield made
                if at > CHUNK:
                    data, at = data[at:], 0
    except OSError:
        return False


def _read_cassette[T](path: Path, make: Make[T], parts: Parts) -> list[tuple[int, T]]:
    """Each exchange's id and what `make` keeps of it, its shared parts added to `parts` (empty until then). A
    file as llmproxy writes it is read exchange by exchange (`one_by_one`), so memory never holds the whole
    file's bytes beside its parsed JSON (with the parser's own buffers, that doubled the peak of loading 10,000
    exchanges); any other is read whole."""
    made: list[tuple[int, T]] = []
    stream = one_by_one(path, make, parts)
    while True:
        try:
            made.append(next(stream))
        except StopIteration as stop:
            if stop.value:
                return made
            break  # read whole, which says what is wrong where
    parts.clear()  # the cassette's are the first parts read: read again, whole
    data = _parse(path, _read(path))
    if not isinstance(data, dict) or "llmproxy_cassette" not in data:
        raise CassetteError(f'{path}: not an llmproxy cassette (no "llmproxy_cassette" version field)')
    version = data["llmproxy_cassette"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise CassetteError(
            f"{path}: $.llmproxy_cassette: expected the version number {VERSION}, got {json_kind(version)}"
        )
    if version != VERSION:
        raise CassetteError(f"{path}: unsupported cassette version {version} (this llmproxy reads {VERSION})")
    try:
        exchanges = data.get("exchanges")
        if not isinstance(exchanges, list) or set(data) != {"llmproxy_cassette", "exchanges"}:
            Cassette.model_validate(data)  # says what is wrong with the envelope
        return [_made(make, exchange, parts, path) for exchange in exchanges]  # type: ignore[union-attr]
    except ValidationError:
        try:  # said as the whole document's error, which names the exchange and its place in the file
            Cassette.model_validate(data)
        except ValidationError as exc:
            raise CassetteError(f"{path}: {describe(exc, data.get('exchanges'))}") from None
        raise


def _read_exchange(parts: Parts, data: bytes, start: int, end: int, where: object) -> Any:
    """One exchange's JSON, as `one_by_one` found it in the file, parsed with its parts put back."""
    try:
        return parts.read(data, start, end)
    except PartError as exc:
        raise CassetteError(f"{where}: {exc}") from None


def _made[T](make: Make[T], data: Any, parts: Parts, where: object) -> tuple[int, T]:
    """The exchange's id and what `make` keeps of it, its shared parts put back. Raises CassetteError for a
    part that cannot be (ValidationError for what the model refuses)."""
    try:
        data = parts.resolve(data)
    except PartError as exc:
        raise CassetteError(f"{where}: {exc}") from None
    return _kept(make, data)


def _kept[T](make: Make[T], data: Any) -> tuple[int, T]:
    """The id and what `make` keeps of an exchange read whole (ValidationError for what the model refuses)."""
    kept = make(data)  # first: it checks that `data` is an exchange, with an id
    exchange_id: int = data["id"]
    return exchange_id, kept


def _read_journal[T](path: Path, make: Make[T], parts: Parts) -> tuple[str | None, list[tuple[int, T]]]:
    """Its rewrite state (None: appended to the cassette; "started": it replaces it; "pending" or "none": nothing
    to read) and its exchanges."""
    lines = _read(path).split(b"\n")
    if lines and lines[-1]:  # a line the killed writer did not finish: that exchange was in flight
        logger.warning("%s: ignoring an unfinished last line", path)
    lines = lines[:-1]
    if not lines:  # the recorder died before its header was whole
        return "none", []
    header = _parse(path, lines[0])
    if not isinstance(header, dict) or header.get("llmproxy_journal") != JOURNAL_VERSION:
        raise CassetteError(f"{path}: not an llmproxy journal")
    if pending(header):
        return PENDING, []
    rewrite = header.get("rewrite")
    exchanges = []
    for number, line in enumerate(lines[1:], start=2):
        where = f"{path}: line {number}"
        data = _parse(where, line)
        try:
            exchanges.append(_made(make, data, parts, where))
        except ValidationError as exc:
            raise CassetteError(f"{where}: {describe(exc, [data], prefix='$')}") from None
    return rewrite, exchanges


def describe(exc: ValidationError, exchanges: Any, prefix: str = "$.exchanges") -> str:
    """Pydantic's errors as ``exchange ID: $.path: message`` lines (the first three)."""
    problems = []
    for error in exc.errors()[:3]:
        loc = list(error["loc"])
        if prefix != "$":
            loc = loc[1:]  # "exchanges"
        path = prefix + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
        who = ""
        if loc and isinstance(loc[0], int) and isinstance(exchanges, list) and loc[0] < len(exchanges):
            entry = exchanges[loc[0]]
            if isinstance(entry, dict) and "id" in entry:
                who = f"exchange {entry['id']}: "
        problems.append(f"{who}{path}: {_said(error)}")
    more = len(exc.errors()) - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


_EXPECTED = {
    "int_type": "a number",
    "float_type": "a number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "model_type": "an object",
    "dict_type": "an object",
}


def _said(error: Mapping[str, Any]) -> str:
    """Pydantic's message, or for a value of the wrong JSON type what was expected and what was found: `"1"` is
    a valid integer to pydantic's message, but not where a number is expected."""
    expected = _EXPECTED.get(error["type"])
    return (
        f"expected {expected}, got {json_kind(error['input'])}"
        if expected
        else str(error["msg"]).removeprefix("Value error, ")
    )


def json_kind(value: Any) -> str:
    """A JSON value as a reader would name it: the string "1", null, a list."""
    if isinstance(value, str):
        return f"the string {orjson.dumps(value).decode()}"
    if value is None or isinstance(value, bool | int | float):
        return orjson.dumps(value).decode()
    return "a list" if isinstance(value, list) else "an object"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CassetteError(f"cannot read {path}: {exc.strerror or exc}") from None


def _parse(where: object, data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CassetteError(f"{where}: {invalid_json(exc)}") from None


def invalid_json(error: orjson.JSONDecodeError) -> str:
    return f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not every platform opens directories
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
