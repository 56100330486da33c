"""What tokens would have cost on a given call: the prices the signals' savings are measured in.

Every figure is priced like the call itself (its vendor, model and date, through the same `PriceBook`),
so a saving is never measured at another model's price. Calls that could not be priced save nothing.
"""

from decimal import Decimal

from llmproxy.analysis.calls import RecordedCall
from llmproxy.model import Usage
from llmproxy.pricing import PriceBook, Priced

ZERO = Decimal(0)


class Savings:
    def __init__(self, book: PriceBook) -> None:
        self.book = book

    def usd(self, call: RecordedCall, usage: Usage) -> Decimal | None:
        """What `usage` would cost on `call`'s model, at its date; None when the call is unpriced."""
        if not isinstance(call.cost, Priced):
            return None
        cost = self.book.cost(usage, call.model, at=call.started_at, vendor=call.vendor, url=call.url)
        return cost.usd if isinstance(cost, Priced) else None

    def caching(self, call: RecordedCall, tokens: int) -> Decimal:
        """Reading `tokens` of prompt from the cache instead of sending them uncached."""
        if tokens <= 0:
            return ZERO
        sent = self.usd(call, Usage(input_tokens=tokens))
        cached = self.usd(call, Usage(input_tokens=tokens, cache_read_tokens=tokens))
        return sent - cached if sent is not None and cached is not None else ZERO

    def cache_write_premium(self, call: RecordedCall, tokens: int) -> Decimal:
        """What writing `tokens` to the cache costs above sending them (Anthropic charges writes 1.25x)."""
        if tokens <= 0:
            return ZERO
        sent = self.usd(call, Usage(input_tokens=tokens))
        written = self.usd(call, Usage(input_tokens=tokens, cache_write_tokens=tokens))
        return max(ZERO, written - sent) if sent is not None and written is not None else ZERO

    def output(self, call: RecordedCall, tokens: int) -> Decimal:
        """`tokens` of answer at the call's own output rate: its output cost over its output tokens (the rate
        of its long-context tier, where the model has one)."""
        if tokens <= 0 or not isinstance(call.cost, Priced) or call.usage.output_tokens <= 0:
            return ZERO
        return call.cost.output_usd * tokens / call.usage.output_tokens

    def input(self, call: RecordedCall, tokens: int) -> Decimal:
        """`tokens` more (or fewer) of prompt at the call's own effective input rate: its input cost over its
        input tokens, so a prompt mostly read from cache makes its tokens cheap."""
        if tokens <= 0 or not isinstance(call.cost, Priced) or call.usage.input_tokens <= 0:
            return ZERO
        return call.cost.input_usd * tokens / call.usage.input_tokens

    def whole(self, call: RecordedCall) -> Decimal:
        return call.cost.usd if isinstance(call.cost, Priced) else ZERO

    def blended_rate(self, call: RecordedCall, model: str) -> Decimal | None:
        """USD per million tokens of `model` at the call's date and vendor, three input tokens to one output."""
        costs = [
            self.book.cost(usage, model, at=call.started_at, vendor=call.vendor, url=call.url)
            for usage in (Usage(input_tokens=1_000_000), Usage(output_tokens=1_000_000))
        ]
        if not all(isinstance(cost, Priced) for cost in costs):
            return None
        input_rate, output_rate = (cost.usd for cost in costs if isinstance(cost, Priced))
        return (3 * input_rate + output_rate) / 4
