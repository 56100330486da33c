"""The replay index: which recorded exchange answers a request, and why none does.

Recorded exchanges are grouped by their `RequestView` key. Identical requests are served in recorded order;
when a key's exchanges run out, `repeat-last` serves its last one again and `error` is a miss. A miss names
the closest recorded request and the paths where the received one differs. What was never served is
`unused`, for the end-of-run summary. Exchanges marked with faults of the kinds a request `passes_over` (the
faults llmproxy injected in an answer's place, when live chaos decides instead) are neither served to it nor
unused. A request that came over a WebSocket is matched read whole
(`cassette/websocket.py`): the request it stands for, whether or not the client sent all of it. Of identical
MCP requests, one recorded in the request's own session (`Mcp-Session-Id`) is served first.
"""

import hashlib
import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from llmproxy.background_traffic import background_url
from llmproxy.cassette import jsonpath
from llmproxy.cassette.matching import Difference, RequestView, closest, differences
from llmproxy.cassette.model import Exchange, Places, Request, header_pairs
from llmproxy.cassette.neutral import Neutral, Neutralised, budgets_fit, here
from llmproxy.cassette.presets import PRESETS, Preset, preset_for
from llmproxy.cassette.recorded import Recorded, recorded_of
from llmproxy.cassette.store import gc_paused
from llmproxy.cassette.websocket import matched_requests
from llmproxy.tool_protocols import SESSION_HEADER


class OnExhausted(StrEnum):
    REPEAT_LAST = "repeat-last"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class ReplayHit:
    exchange: Exchange
    repeated: bool = False  # served again after its key ran out (repeat-last)


@dataclass(frozen=True, slots=True)
class ReplayMiss:
    request: str  # "POST https://host/path", redacted
    closest: Exchange | None
    differences: tuple[Difference, ...]
    exhausted: bool = False  # the request matched, but every matching exchange was already served
    faults_only: bool = False  # the request matched, but only exchanges it passes over: injected faults
    position: int | None = None  # the closest exchange's, among every exchange the index replays

    def explain(self) -> str:
        """The diagnostic: one line for the request, then the closest recording and what differs."""
        return f"{self.request}: {self.reason}"

    @property
    def reason(self) -> str:
        """The diagnostic without the request's line: why nothing recorded answers it."""
        if self.exhausted:
            return "every recorded exchange for this request was already served"
        if self.faults_only:
            return (
                "every recorded exchange for this request is a fault llmproxy injected, and under chaos recorded"
                " faults are not served (the live chaos decides): record its answer, or replay without chaos to"
                " meet the recorded faults"
            )
        if self.closest is None:
            return "no recorded exchange matches (the cassette is empty)"
        lines = [f"no recorded exchange matches; closest is exchange {self.closest.id}, differing at:"]
        lines += [f"  {d.path}: recorded {d.recorded!r}, received {d.received!r}" for d in self.differences]
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class MatchOptions:
    preset: str | None = None  # one of presets.CHOICES, or None: the default and the client's by its User-Agent
    ignore: tuple[jsonpath.Path, ...] = ()
    on_exhausted: OnExhausted = OnExhausted.ERROR
    places: Places | None = None  # where the client runs; None: llmproxy's own (`neutral.here`)


class ReplayIndex:
    """Recorded requests by key, indexed in recorded order as far as the requests served so far needed:
    a request whose key is not indexed yet indexes on until its key comes up (the first exchange with that
    key: identical requests are served in recorded order) or every exchange is indexed. So the first
    request a 10,000-exchange cassette answers waits for no more keys than it takes to reach its own, and
    only keys are kept (not even the requests, unless a WebSocket's): the views that explain a miss are built
    when the first miss needs them."""

    def __init__(self, exchanges: Sequence[Exchange], options: MatchOptions = MatchOptions()) -> None:
        """`exchanges`: inflated (histories rebuilt), in recorded order; a loaded cassette's (`Recorded`) are
        made models only as they are served."""
        self.options = options
        self._exchanges = recorded_of(exchanges)
        # the default preset: the client's places for what it sends now, and for what was recorded where the
        # cassette does not say (recorded before it did, or by hand)
        self._neutral = None if options.preset == "none" else Neutral(options.places or here())
        # as far as indexed: a WebSocket message's request as matched (read whole with its connection's earlier
        # messages), None for an HTTP request, made again from the cassette when a miss needs it
        self._requests: list[Request | None] = []
        self._reading = matched_requests(self._exchanges)
        self._views: list[RequestView] | None = None
        self._kinds: list[bool] | None = None  # whether each exchange is background traffic, found at the first miss
        # by the digest of a key (a key holds the whole normalised request: 4 KB each for a small one)
        self._queues: dict[bytes, list[int]] = {}  # positions not yet served, in recorded order
        self._last: dict[bytes, int] = {}
        self._used: set[int] = set()
        self._passed: set[bytes] = set()  # keys of which injected faults were passed over
        self._budgets: dict[int, Neutralised] = {}  # the output budgets of the positions indexed that have any
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return len(self._exchanges)

    @property
    def recorded(self) -> Recorded:
        """Its exchanges, in recorded order."""
        return self._exchanges

    def view(self, request: Request, provider: str | None, places: Places | None = None) -> RequestView:
        """`places`: where a recorded request was made, as its exchange says; None: where the client runs now."""
        neutral = self._neutral
        if neutral is not None and places is not None:
            neutral = Neutral(places)
        return RequestView.of(request, provider, self._preset(request), self.options.ignore, neutral)

    def take(
        self, request: Request, provider: str | None, passes_over: frozenset[str] = frozenset()
    ) -> ReplayHit | ReplayMiss:
        """The exchange that answers `request` (redacted like the cassette), or why there is none. `passes_over`:
        kinds of injected fault (`Injection.kind`) an exchange marked with one is not served for."""
        return self._answer(request, provider, passes_over, serve=True)

    def peek(
        self, request: Request, provider: str | None, passes_over: frozenset[str] = frozenset()
    ) -> ReplayHit | ReplayMiss:
        """What `take` would answer now, nothing served: a request tried without sending it."""
        return self._answer(request, provider, passes_over, serve=False)

    def _answer(
        self, request: Request, provider: str | None, passes_over: frozenset[str], serve: bool
    ) -> ReplayHit | ReplayMiss:
        view = self.view(request, provider)
        key = _digest(view.key)
        with self._lock:
            queue = self._queue(key, passes_over)
            pick = self._fitting(key, queue, view, passes_over)
            if queue and pick is None:  # the same request but for its budget: too far apart to be derived
                return self._budget_miss(request, view, queue[0])
            if queue and pick is not None and not serve:
                return ReplayHit(self._exchanges[queue[pick]])
            if queue and pick is not None:
                if pick == 0:  # a tool server's request (no output budget) goes to its own MCP session first
                    pick = self._same_session(key, queue, request)
                position = queue.pop(pick)
                self._used.add(position)
                self._last[key] = position
                return ReplayHit(self._exchanges[position])
            if key in self._last:
                if not self._fits(self._last[key], view):
                    return self._budget_miss(request, view, self._last[key])
                if self.options.on_exhausted is OnExhausted.REPEAT_LAST:
                    return ReplayHit(self._exchanges[self._last[key]], repeated=True)
                return ReplayMiss(_describe(request), None, (), exhausted=True)
            if key in self._passed:
                return ReplayMiss(_describe(request), None, (), faults_only=True)
            views = self._all_views()
            kinds = self._all_kinds()
        # background traffic is compared with background traffic only, a model call with model calls: a telemetry
        # upload set beside a chat request says nothing but that every field differs
        kind = background_url(request.url, llm_api=provider is not None) is not None
        alike = [position for position, other in enumerate(kinds) if other == kind]
        nearest = closest(view, [views[position] for position in alike])
        near = alike[nearest] if nearest is not None else None
        if near is None:
            return ReplayMiss(_describe(request), None, ())
        found = tuple(differences(views[near], view))
        return ReplayMiss(_describe(request), self._exchanges[near], found, position=near)

    def _same_session(self, key: bytes, queue: list[int], request: Request) -> int:
        """Where in `queue` (the positions of `key`, a digest) the first exchange recorded in the request's MCP
        session is, indexing on as far as it takes; 0 when none is, or the request has no session. Replay hands
        a client the session id it recorded (in `initialize`'s answer), so a session's requests carry the id
        they were recorded with: each session is answered what it was, whatever order two sessions ask in.
        Holds the lock."""
        session = _session_id(request.headers)
        if session is None:
            return 0
        at = 0
        while True:
            while at < len(queue):
                if _session_id(self._exchanges[queue[at]].request.headers) == session:
                    return at
                at += 1
            if self._index_until(key) is None:  # grows `queue` by the next exchange of `key`
                return 0

    def _queue(self, key: bytes, passes_over: frozenset[str]) -> list[int] | None:
        """The positions not yet served for `key` (a digest), indexed on as far as it takes to have one to serve,
        those marked with a fault `passes_over` names dropped; empty or None when none is left. Holds the lock."""
        queue = self._queues.get(key)
        while True:
            if not queue:
                queue = self._index_until(key)
            if not queue or not passes_over:
                return queue
            while queue and self._exchanges.injected(queue[0]) & passes_over:
                del queue[0]
                self._passed.add(key)
            if queue:
                return queue

    def _fitting(
        self, key: bytes, queue: list[int] | None, view: RequestView, passes_over: frozenset[str]
    ) -> int | None:
        """Where in `queue` (the positions not yet served for `key`) the first exchange whose output budgets
        agree with `view`'s is, indexed on as far as it takes to find one. Holds the lock."""
        checked = 0
        while queue:
            for index in range(checked, len(queue)):
                position = queue[index]
                passed_over = passes_over and self._exchanges.injected(position) & passes_over
                if self._fits(position, view) and not passed_over:
                    return index
            checked = len(queue)
            if self._index_until(key) is None:
                return None
        return None

    def _fits(self, position: int, view: RequestView) -> bool:
        """Whether the output budgets of an indexed exchange agree with `view`'s (`neutral.budgets_fit`)."""
        budgets = self._budgets.get(position)
        return budgets is None or view.neutralised is None or budgets_fit(budgets, view.neutralised)

    def _budget_miss(self, request: Request, view: RequestView, position: int) -> ReplayMiss:
        """The miss of a request that matches an indexed exchange but for output budgets too far apart to be
        derived from the places neutralised: their difference. Holds the lock."""
        recorded = self._recorded_view(self._requests[position] or self._exchanges.request(position), position)
        found = tuple(differences(recorded, view))
        return ReplayMiss(_describe(request), self._exchanges[position], found, position=position)

    def _index_until(self, key: bytes) -> list[int] | None:
        """Index on until an exchange with `key` (a digest) is indexed (its queue) or all are (None). Holds the
        lock."""
        with gc_paused():
            for request in self._reading:
                position = len(self._requests)
                self._requests.append(request if self._exchanges.on_websocket(position) else None)
                view = self._recorded_view(request, position)
                if view.neutralised is not None and view.neutralised.budgets:  # kept apart: `_fitting` reads them
                    self._budgets[position] = Neutralised(None, view.neutralised.budgets, view.neutralised.slack)
                found = _digest(view.key)
                self._queues.setdefault(found, []).append(position)
                if found == key:
                    return self._queues[key]
        return None

    def _all_views(self) -> list[RequestView]:
        """Every recorded request's view, to find the closest to a miss. Holds the lock."""
        if self._views is None:  # a miss has indexed every exchange: `_requests` holds them all
            with gc_paused():
                self._views = [
                    self._recorded_view(request or self._exchanges.request(position), position)
                    for position, request in enumerate(self._requests)
                ]
        return self._views

    def _all_kinds(self) -> list[bool]:
        """Whether each recorded exchange is background traffic (`llmproxy.background_traffic`). Holds the lock."""
        if self._kinds is None:
            exchanges = self._exchanges
            self._kinds = [
                background_url(exchanges.request(position).url, llm_api=exchanges.provider(position) is not None)
                is not None
                for position in range(len(exchanges))
            ]
        return self._kinds

    def _recorded_view(self, request: Request, position: int) -> RequestView:
        return self.view(request, self._exchanges.provider(position), self._exchanges.places(position))

    def extended(self, more: Sequence[Exchange]) -> "ReplayIndex":
        """This index with `more` recorded exchanges after its own (a cassette loaded into a running replay): what
        it has served stays served, so identical requests go on through the recordings in order."""
        with self._lock:
            grown = ReplayIndex(Recorded.joined([self._exchanges, recorded_of(more)]), self.options)
            grown._neutral = self._neutral  # the places it started with, wherever it runs now
            indexed = len(self._requests)
            grown._requests = list(self._requests)
            grown._reading = itertools.islice(grown._reading, indexed, None)  # those are indexed already
            grown._queues = {key: list(queue) for key, queue in self._queues.items()}
            grown._last = dict(self._last)
            grown._used = set(self._used)
            grown._passed = set(self._passed)
            grown._budgets = dict(self._budgets)
        return grown

    def unused(self, passes_over: frozenset[str] = frozenset()) -> list[Exchange]:
        """The exchanges never served, but those marked with a fault `passes_over` names: they are not served."""
        with self._lock:
            return [
                self._exchanges[position]
                for position in range(len(self._exchanges))
                if position not in self._used and not (passes_over and self._exchanges.injected(position) & passes_over)
            ]

    def served(self) -> list[Exchange]:
        """The recorded exchanges that answered a request, in cassette order."""
        with self._lock:
            return [self._exchanges[position] for position in sorted(self._used)]

    def _preset(self, request: Request) -> Preset | None:
        name = self.options.preset
        if name in ("none", "default"):
            return None
        if name is not None:
            return PRESETS[name]
        return preset_for({key.lower(): value for key, value in header_pairs(request.headers)})


def _digest(key: bytes) -> bytes:
    return hashlib.blake2b(key, digest_size=16).digest()


def _describe(request: Request) -> str:
    return f"{request.method} {request.url}"


def _session_id(headers: Sequence[str]) -> str | None:
    return next((value for name, value in header_pairs(headers) if name.lower() == SESSION_HEADER), None)
