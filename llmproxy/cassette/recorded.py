"""A cassette's exchanges as replay holds them: each kept as the file's parsed JSON until it is first read, then
as its `Exchange` model.

Every exchange is checked against the model when the cassette is loaded (a bad file fails at once, saying
where), and every shared history is rebuilt in the JSON; only the models are not kept. A model of each of
10,000 exchanges takes more memory than the JSON it wraps (52 MB on top of 46 MB), while a replay reads few of
them whole: the ones it serves. The index reads only what a request's key needs (`provider`, `request`).
"""

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, overload

from llmproxy.cassette.files import read_stored
from llmproxy.cassette.history import rebuild
from llmproxy.cassette.leftovers import reading
from llmproxy.cassette.model import Exchange, Extends, Places, Request
from llmproxy.cassette.store import gc_paused
from llmproxy.errors import CassetteError

type Entry = dict[str, Any] | Exchange  # as stored, or once read: its model


class Recorded(Sequence[Exchange]):
    """Exchanges in recorded order, histories whole. Reading one makes its model (once: two threads reading it
    at the same moment may both make it, and either is kept)."""

    def __init__(self, entries: Iterable[Entry] = ()) -> None:
        self._entries: list[Entry] = list(entries)

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, position: int) -> Exchange: ...
    @overload
    def __getitem__(self, position: slice) -> list[Exchange]: ...
    def __getitem__(self, position: int | slice) -> Exchange | list[Exchange]:
        if isinstance(position, slice):
            return [self[one] for one in range(*position.indices(len(self)))]
        entry = self._entries[position]
        if isinstance(entry, Exchange):
            return entry
        exchange = self._entries[position] = Exchange.model_validate(entry)
        return exchange

    @classmethod
    def joined(cls, parts: Iterable["Recorded"]) -> "Recorded":
        """Several cassettes' exchanges, one after another."""
        return cls(entry for part in parts for entry in part._entries)

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
    """A cassette's exchanges for replay, a leftover journal merged (and said so: `leftovers.reading`). Raises
    CassetteError saying which file, exchange and field is wrong."""
    reading(path)
    with gc_paused():
        stored = read_stored(path)
        try:
            return Recorded(_inflated(stored))
        except ValueError as exc:
            raise CassetteError(f"{path}: {exc}") from None


def _inflated(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The exchanges with every shared history rebuilt, as `history.inflate` rebuilds them in models (the JSON
    is already checked). Raises ValueError naming the exchange whose reference cannot be resolved."""
    bodies: dict[int, Any] = {}
    for position, exchange in enumerate(stored):
        request = exchange["request"]
        body = request.get("body")
        ref = request.get("extends")
        json = body.get("json") if isinstance(body, dict) and "json" in body else None
        if ref is not None:
            json = rebuild(exchange["id"], Extends.model_validate(ref), json, bodies)
            request = {name: value for name, value in request.items() if name != "extends"}
            request["body"] = {"json": json}
            stored[position] = {**exchange, "request": request}
        if isinstance(request.get("body"), dict) and "json" in request["body"]:
            bodies[exchange["id"]] = json
    return stored


def recorded_of(exchanges: Sequence[Exchange]) -> Recorded:
    """Exchanges already made models (inflated), held as replay holds a loaded cassette's."""
    return exchanges if isinstance(exchanges, Recorded) else Recorded(exchanges)
