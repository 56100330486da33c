"""A USD cost budget over everything answered (MockServer's `llmCostBudgetUsd`): each answer's usage is priced
with `llmproxy.pricing`, added up in the store (shared between proxies like a quota), and once the spend
reaches the budget every further LLM request is refused.

The spend is kept as a whole number of picodollars (10⁻¹² USD), so Redis can add it atomically and the sum
is exact to far below any price. A call that cannot be priced (an unknown model, a local one) is counted
apart and reported, never taken as free.
"""

import threading
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, Decimal
from typing import Final

from llmproxy.intercept.counters import Store
from llmproxy.model import Provider, Usage
from llmproxy.pricing import PriceBook, Priced, Unpriced
from llmproxy.words import plural

PICO: Final = Decimal("1e-12")
_SPENT: Final = "budget:spent-picousd"
_UNPRICED: Final = "budget:unpriced-calls"


@dataclass(frozen=True, slots=True)
class Spend:
    spent: Decimal
    limit: Decimal
    unpriced: int  # calls that could not be priced, left out of `spent`

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.limit

    @property
    def name(self) -> str:
        """How the summary and the recording name it, as a rule: "budget $2.00"."""
        return f"budget {limit_text(self.limit)}"

    @property
    def detail(self) -> str:
        """What a refusal in the budget's name records: the spend ("$2.0042 spent"); `name` gives the limit."""
        return f"{spent_text(self.spent)} spent"

    def describe(self) -> str:
        left_out = f"; not in it: {plural(self.unpriced, 'call')} that could not be priced"
        unpriced = left_out if self.unpriced else ""
        return f"{spent_text(self.spent)} spent of the {limit_text(self.limit)} budget{unpriced}"


def limit_text(limit: Decimal) -> str:
    """A budget as given, in cents or finer: "$2.00", "$0.005" (never "$0.00")."""
    return f"${limit:.{max(2, -int(limit.normalize().as_tuple().exponent))}f}"


def spent_text(spent: Decimal) -> str:
    """A spend to four places, or to its first two significant digits below that: "$0.0134", "$0.000021"."""
    places = 4 if not spent or abs(spent) >= Decimal("0.0001") else 1 - spent.adjusted()
    return f"${spent:.{places}f}"


class Budget:
    def __init__(self, limit: Decimal, store: Store, book: PriceBook | None = None) -> None:
        self.limit = limit
        self.store = store
        self.book = book or PriceBook()
        self.unpriced_reasons: dict[str, int] = {}  # why calls went unpriced here → how many
        self._lock = threading.Lock()

    def standing(self) -> Spend:
        spent = self.store.peek(_SPENT, 0, 0).used
        unpriced = self.store.peek(_UNPRICED, 0, 0).used
        return Spend(Decimal(spent) * PICO, self.limit, unpriced)

    def spend(
        self,
        usage: Usage | None,
        model: str | None,
        *,
        at: datetime,
        vendor: str | None = None,
        url: str | None = None,
        provider: Provider | None = None,
    ) -> Priced | Unpriced:
        """Price one answer and add it to the spend (unpriced when its usage is not known)."""
        if usage is None:
            cost: Priced | Unpriced = Unpriced("the answer reported no usage", vendor, model)
        else:
            cost = self.book.cost(usage, model, at=at, vendor=vendor, url=url, provider=provider)
        if isinstance(cost, Priced):
            picodollars = int((cost.usd / PICO).to_integral_value(ROUND_CEILING))
            if picodollars:
                self.store.add(_SPENT, picodollars, 0, 0)
        else:
            self.store.add(_UNPRICED, 1, 0, 0)
            with self._lock:
                self.unpriced_reasons[cost.reason] = self.unpriced_reasons.get(cost.reason, 0) + 1
        return cost
