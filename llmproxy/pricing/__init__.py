"""Token usage → US dollars, from a maintained price library (`genai-prices`), with the user's own prices
on top (`--prices FILE`).

The one entry point is `PriceBook.cost(usage, model, vendor=…, url=…, provider=…, at=…)`: a `Priced` with
`Decimal` amounts, or an `Unpriced` that says why — never a silent $0. The report, `verify cost` and the
Intercept issue's budget all price through it.
"""

from llmproxy.pricing.book import PriceBook, Priced, Unpriced, library_version
from llmproxy.pricing.overrides import PriceRule, load_price_rules

type Cost = Priced | Unpriced

__all__ = ["Cost", "PriceBook", "PriceRule", "Priced", "Unpriced", "library_version", "load_price_rules"]
