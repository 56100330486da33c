"""A cassette's exchanges as replay holds them: each kept as the file's parsed JSON until it is first read, then
as its `Exchange` model.

Every exchange is checked against the model when the cassette is loaded (a bad file fails, saying where), and
every shared history is rebuilt in the JSON; only the models are not kept. A run loads its cassettes on a thread
of their own (`Recorded.loading`) once its proxy listens: the index waits only for the exchanges a request could
match (`has`), and the run waits for the whole load (`loaded`), failing as a load at once would, before the
command it wraps starts. A model of each of
10,000 exchanges takes more memory than the JSON it wraps (52 MB on top of 46 MB), while a replay reads few of
them whole: the ones it serves. The index reads only what a request's key needs (`provider`, `request`).
"""

import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from llmproxy.cassette.files import iter_stored
from llmproxy.cassette.history import rebuild
from llmproxy.cassette.leftovers import reading
from llmproxy.cassette.model import Exchange, Extends, Places, Request
from llmproxy.cassette.store import gc_paused
from llmproxy.errors import CassetteError

type Entry = dict[str, Any] | Exchange  # as stored, or once read: its model


class Recorded(Sequence[Exchange]):
    """Exchanges in recorded order, histories whole. Reading one makes its model (once: two threads reading it
    at the same moment may both make it, and either is kept). While it loads, its length and the exchanges not
    read yet are waited for; the rest of what it says is about exchanges read already (`has`)."""

    def __init__(self, entries: Iterable[Entry] = (), sizes: Iterable[tuple[Path, int]] = ()) -> None:
        self._entries: list[Entry] = list(entries)
        self._sizes = list(sizes)
        self._read = threading.Condition()  # notified as exchanges are read, and when the load ends
        self._unread: tuple[Path, ...] = ()  # the cassettes to read once it is first waited for
        self._loading = False
        self._failure: BaseException | None = None

    @classmethod
    def loading(cls, paths: Sequence[Path], background: bool = True) -> "Recorded":
        """The exchanges of the cassettes `paths` (each there), one after another, a leftover journal said
        (`leftovers.reading`) first. Read now (raising CassetteError saying which file, exchange and field is
        wrong), or with `background` on a thread of their own, started when it is first waited for: by the first
        request, or by the run once its proxy listens (`loaded`, which raises what failed). So the proxy's start
        never shares the CPU with the load, and its first answer waits only for the exchanges it could match."""
        for path in paths:
            reading(path)
        recorded = cls()
        recorded._loading = True
        if background:
            recorded._unread = tuple(paths)
            return recorded
        recorded._load(tuple(paths))
        return recorded.loaded()

    def _load(self, paths: tuple[Path, ...]) -> None:
        try:
            with gc_paused():
                for path in paths:
                    before = len(self._entries)
                    for entry in _inflating(path, iter_stored(path)):
                        with self._read:
                            self._entries.append(entry)
                            self._read.notify_all()
                    self._sizes.append((path, len(self._entries) - before))
        except BaseException as exc:  # the run's to raise (`loaded`), as a load at once would have
            self._failure = exc
        finally:
            with self._read:
                self._loading = False
                self._read.notify_all()

    def loaded(self) -> "Recorded":
        """Itself once every exchange is read. Raises what failed the load (CassetteError saying which file,
        exchange and field is wrong)."""
        self._wait()
        if self._failure is not None:
            raise self._failure
        return self

    def has(self, position: int) -> bool:
        """Whether there is an exchange at `position`: waits until it is read, or the load is over. Raises what
        failed the load when it failed before `position`: nothing is decided on a cassette read in part."""
        if position < len(self._entries):
            return True
        with self._read:
            self._start()
            self._read.wait_for(lambda: position < len(self._entries) or not self._loading)
        if position < len(self._entries):
            return True
        if self._failure is not None:
            raise self._failure
        return False

    def positions(self) -> Iterator[int]:
        """Each exchange's position, in recorded order, each once it is read (`has`)."""
        position = 0
        while self.has(position):
            yield position
            position += 1

    @property
    def sizes(self) -> tuple[tuple[Path, int], ...]:
        """The cassettes it holds, in order, each with its number of exchanges (once loaded)."""
        self._wait()
        return tuple(self._sizes)

    def _wait(self) -> None:
        with self._read:
            self._start()
            self._read.wait_for(lambda: not self._loading)

    def _start(self) -> None:
        """Start reading what is still to be read, on a thread of its own. Holds `_read`."""
        if self._unread:
            paths, self._unread = self._unread, ()
            threading.Thread(target=self._load, args=(paths,), name="llmproxy-cassette-loader", daemon=True).start()

    def __len__(self) -> int:
        """How many exchanges it holds, once loaded (a load that failed: as many as were read)."""
        self._wait()
        return len(self._entries)

    @overload
    def __getitem__(self, position: int) -> Exchange: ...
    @overload
    def __getitem__(self, position: slice) -> list[Exchange]: ...
    def __getitem__(self, position: int | slice) -> Exchange | list[Exchange]:
        if isinstance(position, slice):
            return [self[one] for one in range(*position.indices(len(self)))]
        if not 0 <= position < len(self._entries):
            self._wait()
        entry = self._entries[position]
        if isinstance(entry, Exchange):
            return entry
        exchange = self._entries[position] = Exchange.model_validate(entry)
        return exchange

    @classmethod
    def joined(cls, parts: Iterable["Recorded"]) -> "Recorded":
        """Several cassettes' exchanges, one after another (each loaded)."""
        loaded = [part.loaded() for part in parts]
        return cls(
            (entry for part in loaded for entry in part._entries), (size for part in loaded for size in part._sizes)
        )

    def made(self, position: int) -> bool:
        """Whether an exchange's model has been made (it was read): what the exchanges cost in memory so far."""
        return isinstance(self._entries[position], Exchange)

    def provider(self, position: int) -> str | None:
        entry = self._entries[position]
        return entry.provider if isinstance(entry, Exchange) else entry.get("provider")

    def places(self, position: int) -> Places | None:
        """Where the client ran when an exchange was recorded, if the cassette says."""
        entry = self._entries[position]
        if isinstance(entry, Exchange):
            return entry.places
        places = entry.get("places")
        return Places.model_validate(places) if places is not None else None

    def request(self, position: int) -> Request:
        """An exchange's request, without making the exchange's model (nor keeping the request's)."""
        entry = self._entries[position]
        return entry.request if isinstance(entry, Exchange) else Request.model_validate(entry["request"])

    def injected(self, position: int) -> frozenset[str]:
        """The kinds of the faults llmproxy injected into an exchange's answer (`Injection.kind`), without making
        the exchange's model."""
        entry = self._entries[position]
        if isinstance(entry, Exchange):
            return frozenset(injection.kind for injection in entry.injected)
        return frozenset(injection["kind"] for injection in entry.get("injected") or ())

    def on_websocket(self, position: int) -> bool:
        entry = self._entries[position]
        return (entry.websocket if isinstance(entry, Exchange) else entry.get("websocket")) is not None


def load_recorded(path: Path) -> Recorded:
    """A cassette's exchanges for replay, read now, a leftover journal merged (and said so: `leftovers.reading`).
    Raises CassetteError saying which file, exchange and field is wrong."""
    return Recorded.loading([path], background=False)


def _inflating(path: Path, stored: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The exchanges with every shared history rebuilt, as `history.inflate` rebuilds them in models (the JSON
    is already checked). Raises CassetteError naming the exchange whose reference cannot be resolved."""
    bodies: dict[int, Any] = {}
    for exchange in stored:
        request = exchange["request"]
        body = request.get("body")
        ref = request.get("extends")
        json = body.get("json") if isinstance(body, dict) and "json" in body else None
        if ref is not None:
            try:
                json = rebuild(exchange["id"], Extends.model_validate(ref), json, bodies)
            except ValueError as exc:
                raise CassetteError(f"{path}: {exc}") from None
            request = {name: value for name, value in request.items() if name != "extends"}
            request["body"] = {"json": json}
            exchange = {**exchange, "request": request}
        if isinstance(request.get("body"), dict) and "json" in request["body"]:
            bodies[exchange["id"]] = json
        yield exchange


def recorded_of(exchanges: Sequence[Exchange]) -> Recorded:
    """Exchanges already made models (inflated), held as replay holds a loaded cassette's."""
    return exchanges if isinstance(exchanges, Recorded) else Recorded(exchanges)
