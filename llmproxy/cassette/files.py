"""Reading and writing cassette files: the envelope, the journal beside it, atomic replacement.

The cassette is one JSON document, ``{"llmproxy_cassette": 1, "exchanges": [...]}``, indented by two
spaces, UTF-8, ending in a newline. While recording, each finished exchange is also appended as one JSON
line to ``<cassette>.journal`` (after a header line, ``{"llmproxy_journal": 1, "owner": …}``), so a killed
recorder loses only the exchanges in flight. Readers merge a leftover journal: its exchanges whose ids the
cassette already has were merged before (the recorder died between replacing the cassette and deleting the
journal). The journal of ``--record-mode rewrite`` says ``"rewrite": "started"`` once its run began cleanly:
then it replaces the cassette's exchanges instead; ``"pending"`` (the run never began) and an empty journal
(the recorder died starting) are ignored.
"""

import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson
from pydantic import ValidationError

from llmproxy.cassette.model import VERSION, Cassette, Exchange
from llmproxy.errors import CassetteError

logger = logging.getLogger(__name__)

JOURNAL_VERSION = 1
REWRITE_PENDING, REWRITE_STARTED = "pending", "started"


def journal_path(path: Path) -> Path:
    return path.with_name(path.name + ".journal")


def cassette_exists(path: Path) -> bool:
    """A cassette, or the journal of one still being written."""
    return path.exists() or journal_path(path).exists()


def encode_cassette(exchanges: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"llmproxy_cassette": VERSION, "exchanges": exchanges}, option=orjson.OPT_INDENT_2) + b"\n"


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
        text = orjson.dumps(exchange, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    ")
        self._handle.write((b",\n    " if self._count else b"\n    ") + text)
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


def _checked(data: Any) -> dict[str, Any]:
    Exchange.model_validate(data)  # a model made and dropped at once: only the check is kept
    checked: dict[str, Any] = data
    return checked


type Make[T] = Callable[[Any], T]  # an exchange's JSON checked, and what is kept of it


def _read_exchanges[T](path: Path, make: Make[T]) -> list[T]:
    journal = journal_path(path)
    if not path.exists() and not journal.exists():
        raise CassetteError(f"{path}: no such cassette")
    exchanges = _read_cassette(path, make) if path.exists() else []
    if journal.exists():
        rewrite, journalled = _read_journal(journal, make)
        if rewrite == REWRITE_STARTED:
            exchanges = journalled
        elif rewrite is None:
            known = {exchange_id for exchange_id, _ in exchanges}
            exchanges += [(exchange_id, kept) for exchange_id, kept in journalled if exchange_id not in known]
    last = 0
    for exchange_id, _ in exchanges:
        if exchange_id <= last:
            raise CassetteError(f"{path}: exchange ids must increase in file order: {exchange_id} after {last}")
        last = exchange_id
    return [kept for _, kept in exchanges]


def _read_cassette[T](path: Path, make: Make[T]) -> list[tuple[int, T]]:
    """Each exchange's id and what `make` keeps of it. A file as llmproxy writes it is read exchange by
    exchange, so memory never holds the whole file's bytes beside its parsed JSON (with the parser's own
    buffers, that doubled the peak of loading 10,000 exchanges); any other is read whole."""
    try:
        with path.open("rb") as handle:
            return [_made(make, orjson.loads(text)) for text in _written_exchanges(handle)]
    except OSError as exc:
        raise CassetteError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (_NotAsWritten, orjson.JSONDecodeError, ValidationError):
        pass  # read whole, which says what is wrong where
    data = _parse(path, _read(path))
    if not isinstance(data, dict) or "llmproxy_cassette" not in data:
        raise CassetteError(f'{path}: not an llmproxy cassette (no "llmproxy_cassette" version field)')
    if data["llmproxy_cassette"] != VERSION:
        raise CassetteError(
            f"{path}: unsupported cassette version {data['llmproxy_cassette']!r} (this llmproxy reads {VERSION})"
        )
    try:
        exchanges = data.get("exchanges")
        if not isinstance(exchanges, list) or set(data) != {"llmproxy_cassette", "exchanges"}:
            Cassette.model_validate(data)  # says what is wrong with the envelope
        return [_made(make, exchange) for exchange in exchanges]  # type: ignore[union-attr]
    except ValidationError:
        try:  # said as the whole document's error, which names the exchange and its place in the file
            Cassette.model_validate(data)
        except ValidationError as exc:
            raise CassetteError(f"{path}: {describe(exc, data.get('exchanges'))}") from None
        raise


_OPENING = b'{\n  "llmproxy_cassette": %d,\n  "exchanges": [\n    ' % VERSION  # PendingCassette's layout
_BETWEEN = b"\n    },\n    {"  # the end of one exchange and the start of the next
_CLOSING = b"\n    }\n  ]\n}\n"
_CHUNK = 1 << 20


class _NotAsWritten(Exception):
    """The file is not laid out as PendingCassette writes it (a cassette edited by hand, say)."""


def _written_exchanges(handle: BinaryIO) -> Iterator[bytes]:
    """Each exchange's JSON text in a cassette laid out as `PendingCassette` writes it (`encode_cassette`'s
    bytes). JSON strings hold no raw line break, so a line that closes an object at the exchanges' indent
    ends an exchange. Raises _NotAsWritten when the layout is another."""
    if handle.read(len(_OPENING)) != _OPENING:
        raise _NotAsWritten
    pending = bytearray()
    while chunk := handle.read(_CHUNK):
        start = max(0, len(pending) - len(_BETWEEN) + 1)  # a separator may straddle two chunks
        pending += chunk
        begin = 0
        while (end := pending.find(_BETWEEN, start)) >= 0:
            yield bytes(pending[begin:end]) + b"\n    }"
            begin = start = end + len(_BETWEEN) - 1  # the next exchange's "{"
        del pending[:begin]
    if not pending.endswith(_CLOSING):
        raise _NotAsWritten
    yield bytes(pending[: -len(_CLOSING)]) + b"\n    }"


def _made[T](make: Make[T], data: Any) -> tuple[int, T]:
    kept = make(data)  # first: it checks that `data` is an exchange, with an id
    exchange_id: int = data["id"]
    return exchange_id, kept


def _read_journal[T](path: Path, make: Make[T]) -> tuple[str | None, list[tuple[int, T]]]:
    """Its rewrite state (None: appended to the cassette; "none": nothing to read) and its exchanges."""
    lines = _read(path).split(b"\n")
    if lines and lines[-1]:  # a line the killed writer did not finish: that exchange was in flight
        logger.warning("%s: ignoring an unfinished last line", path)
    lines = lines[:-1]
    if not lines:  # the recorder died before its header was whole
        return "none", []
    header = _parse(path, lines[0])
    if not isinstance(header, dict) or header.get("llmproxy_journal") != JOURNAL_VERSION:
        raise CassetteError(f"{path}: not an llmproxy journal")
    rewrite = header.get("rewrite")
    if rewrite == REWRITE_PENDING:
        return rewrite, []
    exchanges = []
    for number, line in enumerate(lines[1:], start=2):
        where = f"{path}: line {number}"
        data = _parse(where, line)
        try:
            exchanges.append(_made(make, data))
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
        problems.append(f"{who}{path}: {error['msg']}")
    more = len(exc.errors()) - len(problems)
    return "; ".join(problems) + (f" (and {more} more)" if more > 0 else "")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CassetteError(f"cannot read {path}: {exc.strerror or exc}") from None


def _parse(where: object, data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise CassetteError(f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


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
