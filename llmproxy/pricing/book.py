"""`PriceBook`: what a call cost, by the user's prices first, then by the `genai-prices` library's.

Token accounting follows llmproxy's neutral `Usage`, which the codecs fill the same way for every provider:
`input_tokens` is the whole prompt *including* cache reads and writes (Anthropic reports them apart from
its `input_tokens`; its codec adds them in; OpenAI's `prompt_tokens` and Gemini's `promptTokenCount`
already hold them). `genai-prices` counts the same way, so each token is priced once, at its own rate:
uncached input, cache read, cache write (5-minute, and Anthropic's dearer 1-hour writes apart), output.

The vendor is who bills the call: named by the caller (a cassette's vendor), else found from the URL
(`api.deepseek.com` is DeepSeek even though it speaks OpenAI's API), else the API family's own vendor.
Prices are those in force on the call's date, long-context tiers included (the library's rules).
"""

import bisect
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from importlib.metadata import version
from typing import Final
from urllib.parse import urlsplit

import genai_prices
from genai_prices import types as gp
from genai_prices.data_snapshot import get_snapshot

from llmproxy.model import Provider, Usage
from llmproxy.pricing.overrides import PriceRule

_VENDOR_OF_PROVIDER: Final[dict[Provider, str]] = {
    Provider.ANTHROPIC: "anthropic",
    Provider.OPENAI: "openai",
    Provider.AZURE: "azure",
    Provider.BEDROCK: "aws",
    Provider.GEMINI: "google",
    Provider.GEMINI_CODE_ASSIST: "google",
    Provider.COHERE: "cohere",
    Provider.VOYAGE: "voyageai",
}
"""The vendor that bills an API family's own hosts. Ollama has none: a local model has no list price."""

_PLAN_BILLED: Final = {
    "chatgpt.com": "Codex on a ChatGPT plan is billed by the plan: priced as the same model on the API",
    "cloudcode-pa.googleapis.com": "Gemini Code Assist is billed by the plan: priced as the same model on the API",
}
"""Hosts whose traffic is not billed per token: the figure is what the same calls would cost on the API."""


@functools.cache
def library_version() -> str:
    """Read once a process: a package's metadata is read from its files each time it is asked for."""
    return f"genai-prices {version('genai-prices')}"


@dataclass(frozen=True, slots=True)
class Priced:
    """A call's cost in USD. `estimated`: the token counts were not reported by the provider, or the route is
    not billed per token (`note` says which); list prices are never an invoice, which the docs say once."""

    usd: Decimal
    input_usd: Decimal
    output_usd: Decimal
    vendor: str
    model: str  # the priced model's id (a dated snapshot is priced as its model)
    basis: str  # where the price came from: the library and its version, or the prices file
    estimated: bool = False
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Unpriced:
    """No price is known: the call is left out of every total and listed as unpriced, never counted as $0."""

    reason: str
    vendor: str | None = None
    model: str | None = None


class PriceBook:
    """Prices calls. `rules` (from `--prices FILE`) win over the library where they match."""

    def __init__(self, rules: Sequence[PriceRule] = ()) -> None:
        self.rules = tuple(rules)
        self._library = library_version()
        self._models: dict[tuple[str | None, str], tuple[str, gp.ModelInfo] | None] = {}
        self._plans: dict[tuple[str, str | None, str | None, Provider | None], _Plan] = {}
        self._costs: dict[tuple[int, int, Usage], Priced] = {}

    def cost(
        self,
        usage: Usage,
        model: str | None,
        *,
        at: datetime,
        vendor: str | None = None,
        url: str | None = None,
        provider: Provider | None = None,
    ) -> Priced | Unpriced:
        """What `usage` on `model` cost at instant `at`. A cost is remembered by the price in force, the call's
        model, vendor and URL, and its usage: a gate or a dashboard prices thousands of calls that differ in
        none of these (the same model, the same few token counts)."""
        if not model:
            return Unpriced("the model is not known")
        key = (model, vendor, url, provider)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= _REMEMBERED:  # the costs are keyed by their plan's identity: forget both
                self._plans.clear()
                self._costs.clear()
            plan = self._plans[key] = self._plan(model, vendor, url, provider)
        estimated = usage.estimated or plan.note is not None
        note = "token counts estimated by llmproxy (the provider reported none)" if usage.estimated else plan.note
        rule = self._rule(plan.vendor, model, at) if self.rules else None
        if rule is not None:
            price = rule.price.calc_price(_library_usage(usage))
            return Priced(
                price["total_price"],
                price["input_price"],
                price["output_price"],
                rule.vendor or plan.vendor or "",
                model,
                f"prices file: {rule.describe()}",
                estimated,
                note,
            )
        if plan.found is None:
            return plan.unpriced
        vendor_id, info = plan.found
        in_force = info.get_prices(at)
        remembered = (id(in_force), id(plan), usage)
        priced = self._costs.get(remembered)
        if priced is None:
            if len(self._costs) >= _REMEMBERED:
                self._costs.clear()
            input_usd, output_usd = self._rates(in_force, usage).price(usage)
            priced = Priced(
                input_usd + output_usd, input_usd, output_usd, vendor_id, info.id, self._library, estimated, note
            )
            self._costs[remembered] = priced
        return priced

    def timeless(
        self, model: str | None, *, vendor: str | None = None, url: str | None = None, provider: Provider | None = None
    ) -> bool:
        """Whether `cost` of `model` is the same at any instant: no prices file (its rules have dates) and one
        library price, not prices that change with the date or the hour. A caller may then keep a call's cost
        for the calls like it to come (a recording served again and again)."""
        if self.rules:
            return False
        if not model:
            return True
        plan = self._plans.get((model, vendor, url, provider))
        if plan is None:
            plan = self._plan(model, vendor, url, provider)
        return plan.found is None or isinstance(plan.found[1].prices, gp.ModelPrice)

    def _plan(self, model: str, vendor: str | None, url: str | None, provider: Provider | None) -> "_Plan":
        """What pricing a call reads whatever its date and usage: who bills it, whether its host bills by plan,
        and the library's model (or why it has none)."""
        billed_by = self.vendor(vendor, url, provider)
        note = _PLAN_BILLED.get(_host(url)) if url else None
        if billed_by is None:
            reason = f"no vendor bills {model!r} here (a local model?): add its price with --prices"
            return _Plan(None, note, None, Unpriced(reason, None, model))
        found = self._find(billed_by, model)
        why = f"{self._library} has no price for {billed_by} {model!r}: add it with --prices"
        return _Plan(billed_by, note, found, Unpriced(why, billed_by, model))

    def vendor(self, vendor: str | None, url: str | None, provider: Provider | None) -> str | None:
        """Who bills the call: the vendor named, else the one whose API the URL is, else the API family's."""
        if vendor:
            return vendor.lower()
        found = _vendor_of_url(url) if url else None
        if found is not None:
            return found
        return _VENDOR_OF_PROVIDER.get(provider) if provider is not None else None

    def _rule(self, vendor: str | None, model: str, at: datetime) -> PriceRule | None:
        """The user's rule for this model in force at `at`: the one that started last wins."""
        chosen: PriceRule | None = None
        for rule in self.rules:
            if rule.applies(vendor, model, at) and (chosen is None or rule.since_key() >= chosen.since_key()):
                chosen = rule
        return chosen

    def _rates(self, price: gp.ModelPrice, usage: Usage) -> "_Rates":
        """The per-token rates of `price` for a call of this many input tokens (its long-context tier)."""
        starts = _TIERS.get(id(price))
        if starts is None:
            starts = _TIERS[id(price)] = _tier_starts(price)
        tier = bisect.bisect_left(starts, usage.input_tokens)  # the tiers starting below the input
        key = (id(price), tier)
        rates = _RATES.get(key)
        if rates is None:
            rates = _RATES[key] = _Rates.of(price, max(usage.input_tokens, 1))
        return rates

    def _find(self, vendor: str, model: str) -> tuple[str, gp.ModelInfo] | None:
        key = (vendor, model)
        if key not in self._models:
            try:
                provider, info = get_snapshot().find_provider_model(model, None, vendor, None)
                self._models[key] = (provider.id, info)
            except LookupError:
                self._models[key] = None
        return self._models[key]


_REMEMBERED: Final = 4096
"""How many plans, and how many costs, a book remembers before it starts again."""


@dataclass(frozen=True, slots=True)
class _Plan:
    """How a model is priced for one vendor and URL: who bills it, the note its host adds, and the library's
    model, or `unpriced` when there is none."""

    vendor: str | None
    note: str | None
    found: tuple[str, gp.ModelInfo] | None
    unpriced: Unpriced


@dataclass(frozen=True, slots=True)
class _Rates:
    """USD per token of each kind, as the library prices them at one tier: asking the library once per model,
    date and tier, then multiplying, gives its figures exactly (its arithmetic is linear within a tier) at a
    fraction of the cost of asking it for every call."""

    uncached: Decimal
    cache_read: Decimal
    cache_write: Decimal
    cache_write_1h: Decimal
    output: Decimal

    @classmethod
    def of(cls, price: gp.ModelPrice, tokens: int) -> "_Rates":
        """Rates measured with `tokens` input tokens (a count in the tier to price)."""

        def per_token(**counts: int) -> Decimal:
            return price.calc_price(genai_prices.Usage(input_tokens=tokens, **counts))["total_price"] / tokens

        base = per_token()
        return cls(
            uncached=base,
            cache_read=per_token(cache_read_tokens=tokens),
            cache_write=per_token(cache_write_tokens=tokens),
            cache_write_1h=per_token(cache_write_tokens=tokens, cache_write_1h_tokens=tokens),
            output=per_token(output_tokens=tokens) - base,
        )

    def price(self, usage: Usage) -> tuple[Decimal, Decimal]:
        """(input, output) USD of a usage, each token once at its own rate."""
        read, write = usage.cache_read_tokens, usage.cache_write_tokens
        hour = min(usage.cache_write_1h_tokens, write)
        uncached = max(0, usage.input_tokens - read - write)
        spent = uncached * self.uncached + read * self.cache_read + (write - hour) * self.cache_write
        return spent + hour * self.cache_write_1h, usage.output_tokens * self.output


_RATES: dict[tuple[int, int], _Rates] = {}
"""The library's rates by price and tier, for every book of the process (each control API, each report): keyed
by the library's price objects, which its snapshot keeps alive."""
_TIERS: dict[int, list[int]] = {}


@functools.lru_cache(maxsize=256)
def _host(url: str) -> str:
    """A URL's host, parsed once per URL (a report prices each of thousands of calls to the same few)."""
    return urlsplit(url).hostname or ""


@functools.lru_cache(maxsize=256)
def _vendor_of_url(url: str) -> str | None:
    """The library's vendor whose API `url` is, looked up once per URL."""
    try:
        return get_snapshot().find_provider(None, None, url).id
    except LookupError:
        return None


def _tier_starts(price: gp.ModelPrice) -> list[int]:
    starts: set[int] = set()
    for value in vars(price).values():
        if isinstance(value, gp.TieredPrices):
            starts.update(tier.start for tier in value.tiers)
    return sorted(starts)


def _library_usage(usage: Usage) -> genai_prices.Usage:
    """The library's usage: the same accounting (input includes cache reads and writes), and the one-hour
    writes named apart so they get their own price where the model has one."""
    return genai_prices.Usage(
        input_tokens=max(usage.input_tokens, usage.cache_read_tokens + usage.cache_write_tokens),
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens or None,
        cache_write_tokens=usage.cache_write_tokens or None,
        cache_write_1h_tokens=min(usage.cache_write_1h_tokens, usage.cache_write_tokens) or None,
    )
