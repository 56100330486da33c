"""The meter: one `Call` per request answered — who answered it (a cassette, an expectation, the upstream, an
injected fault, or nobody), its tokens, its cost, its timing and the tool calls the model asked for. The live
view shows each as it happens, `-v` logs it, and the pytest plugin's `llmproxy` fixture totals a test's.

`Meter.add` prices a call with `llmproxy.pricing` (once per call) and hands it to every listener; a call that
cannot be priced keeps why, and totals never count it as $0.
"""

import itertools
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Final, NamedTuple

from llmproxy.model import Provider, ToolCall, Usage
from llmproxy.pricing import PriceBook, Priced

logger = logging.getLogger(__name__)


class Answered(StrEnum):
    """Who answered a request."""

    HIT = "hit"  # a recorded exchange (replay)
    MOCK = "mock"  # an expectation
    UPSTREAM = "upstream"  # the real server (and, when recording, kept in the cassette)
    INJECTED = "injected"  # a fault put there on purpose (chaos, a quota, the budget)
    MISS = "miss"  # nothing may answer it: llmproxy refused it
    ERROR = "error"  # llmproxy failed to answer it


class _CallFields(NamedTuple):
    method: str
    host: str
    path: str
    answered: Answered
    status: int | None
    provider: Provider | None
    model: str | None
    usage: Usage | None
    tool_calls: tuple[ToolCall, ...]
    streamed: bool
    latency_ms: float | None
    ttft_ms: float | None
    detail: str  # a miss: why nothing answered
    at: datetime
    seq: int  # set by the meter: 1, 2, … in the order calls ended
    cost_usd: Decimal | None
    unpriced: str | None


_NUMBERED: Final = _CallFields._fields.index("seq")  # the fields before those the meter sets: seq, the price


class Call(_CallFields):
    """One request and its answer. `cost_usd` is None when it was not priced (`unpriced` says why, or the call
    carried no usage); `latency_ms` is until the answer ended, `ttft_ms` until its first event (streams); `at`
    defaults to now.

    A named tuple, not a frozen dataclass: the meter makes one for every answer, numbers a copy of it, and a
    frozen dataclass sets each of its seventeen fields through a call of `object.__setattr__` — with the copy,
    more than telemetry's whole share of a replayed answer's cost."""

    __slots__ = ()

    def __new__(
        cls,
        method: str,
        host: str,
        path: str,
        answered: Answered,
        status: int | None,
        provider: Provider | None = None,
        model: str | None = None,
        usage: Usage | None = None,
        tool_calls: tuple[ToolCall, ...] = (),
        streamed: bool = False,
        latency_ms: float | None = None,
        ttft_ms: float | None = None,
        detail: str = "",
        at: datetime | None = None,
        seq: int = 0,
        cost_usd: Decimal | None = None,
        unpriced: str | None = None,
    ) -> "Call":
        at = at if at is not None else datetime.now(UTC)
        fields = (method, host, path, answered, status, provider, model, usage, tool_calls, streamed, latency_ms)
        return tuple.__new__(cls, (*fields, ttft_ms, detail, at, seq, cost_usd, unpriced))

    @property
    def url(self) -> str:
        return f"https://{self.host}{self.path}"

    def line(self) -> str:
        """The call in a line: "#3 hit 200 anthropic claude-haiku-4-5 · 1,200 in (1,000 cached) / 80 out ·
        $0.0012 · 153 ms · POST https://api.anthropic.com/v1/messages"."""
        parts = [f"#{self.seq} {self.answered.value} {self.status if self.status is not None else 'no answer'}"]
        parts[0] += "".join(f" {part}" for part in (self.provider.value if self.provider else "", self.model) if part)
        if (usage := self.usage) is not None:
            cached = f" ({usage.cache_read_tokens:,} cached)" if usage.cache_read_tokens else ""
            parts.append(f"{usage.input_tokens:,} in{cached} / {usage.output_tokens:,} out")
        if self.cost_usd is not None:
            parts.append(f"${self.cost_usd}")
        if self.latency_ms is not None:
            parts.append(f"{self.latency_ms:.0f} ms")
        parts.append(f"{self.method} {self.url}")
        return " · ".join(parts)


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token totals, with `Usage`'s meanings: `input` includes cache reads and writes, `output` reasoning."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0

    def __add__(self, usage: Usage) -> "Tokens":
        return Tokens(
            self.input + usage.input_tokens,
            self.output + usage.output_tokens,
            self.cache_read + usage.cache_read_tokens,
            self.cache_write + usage.cache_write_tokens,
            self.reasoning + usage.reasoning_tokens,
        )

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass(frozen=True, slots=True)
class CallTotals:
    """What a list of metered calls adds up to (the report's `Totals` is its own, read from a cassette)."""

    calls: int
    tokens: Tokens
    cost_usd: Decimal  # of the priced calls
    unpriced: tuple[Call, ...]  # calls with usage that could not be priced: not in `cost_usd`
    by_answer: dict[Answered, int]


def totals(calls: Sequence[Call]) -> CallTotals:
    tokens, cost = Tokens(), Decimal(0)
    for call in calls:
        if call.usage is not None:
            tokens += call.usage
        if call.cost_usd is not None:
            cost += call.cost_usd
    unpriced = tuple(call for call in calls if call.unpriced is not None)
    by_answer = {answer: sum(call.answered is answer for call in calls) for answer in Answered}
    return CallTotals(len(calls), tokens, cost, unpriced, by_answer)


type Listener = Callable[[Call], None]
type Price = tuple[Decimal | None, str | None]  # a call's `cost_usd`, and `unpriced`: why it has none


class Meter:
    """Calls as they end, priced and numbered; any thread may `add`, listeners run on the adding thread and
    must be quick (the proxy's event loop). A listener that fails is logged and dropped, never raised into
    the traffic."""

    def __init__(self, book: PriceBook | None = None) -> None:
        self._book = book
        self._calls: list[Call] = []
        self._listeners: tuple[Listener, ...] = ()  # replaced, never changed: read without a copy
        self._lock = threading.Lock()
        self._seq = itertools.count(1)

    @property
    def book(self) -> PriceBook:
        if self._book is None:  # loading the price library costs a moment: only once something is priced
            self._book = PriceBook()
        return self._book

    def another(self) -> "Meter":
        """An empty meter sharing this one's prices, once loaded (a pytest test's own, loaded once a run)."""
        return Meter(self._book)

    def listen(self, listener: Listener) -> None:
        with self._lock:
            self._listeners = (*self._listeners, listener)

    def add(self, call: Call, price: Price | None = None) -> Call:
        """`call` priced and numbered. `price`: its `cost_usd` and `unpriced` when the caller knows them — a
        call like one before but for its time, whose price is `timeless`."""
        cost_usd, unpriced = price if price is not None else self._priced(call)
        return self.again(call[:_NUMBERED], (cost_usd, unpriced))

    def again(self, fields: tuple[object, ...], price: Price) -> Call:
        """`add` of a call whose `price` is known, from its `fields` but its number and price (up to its `at`):
        made once, numbered as it is made — a recording served again and again is one a request."""
        with self._lock:
            call = tuple.__new__(Call, (*fields, next(self._seq), *price))
            self._calls.append(call)
            listeners = self._listeners
        for listener in listeners:
            try:
                listener(call)
            except Exception:
                logger.exception("a meter listener failed; it hears no more calls")
                with self._lock:
                    self._listeners = tuple(kept for kept in self._listeners if kept is not listener)
        return call

    @property
    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    def timeless(self, call: Call) -> bool:
        """Whether `call` would cost the same made at any other time (`PriceBook.timeless`); False when that
        cannot be told."""
        if call.usage is None or call.answered in (Answered.MISS, Answered.ERROR):
            return True
        try:
            return self.book.timeless(call.model, url=call.url, provider=call.provider)
        except Exception:  # pricing observes: it never breaks the traffic
            logger.debug("could not tell whether %s is priced by the hour", call.url, exc_info=True)
            return False

    def _priced(self, call: Call) -> Price:
        """The call's price, as the fields to set on it: `cost_usd`, or `unpriced` and why."""
        if call.usage is None or call.answered in (Answered.MISS, Answered.ERROR):
            return None, None
        try:
            cost = self.book.cost(call.usage, call.model, at=call.at, url=call.url, provider=call.provider)
        except Exception as error:  # pricing observes: it never breaks the traffic
            logger.exception("could not price %s", call.url)
            return None, f"pricing failed: {error}"
        if isinstance(cost, Priced):
            return cost.usd, None
        return None, cost.reason
