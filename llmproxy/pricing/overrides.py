"""`--prices FILE`: the user's own prices, added to the library's or replacing them.

```json
{"prices": [
  {"model": "my-finetune", "vendor": "openai", "input_mtok": "3", "output_mtok": "12", "cache_read_mtok": "1.5"},
  {"model": "claude-sonnet-4-5", "vendor": "anthropic", "since": "2027-01-01", "input_mtok": "2.5", "output_mtok": "12"}
]}
```

Prices are USD per million tokens, as strings or numbers (read as decimals). `model` matches the model
name exactly, ignoring case; `vendor` (optional) limits the rule to one vendor; `since` (optional, a date)
starts it on that day, so a price change is two rules. A price may have long-context tiers:
`{"base": "3", "tiers": [{"start": 200000, "price": "6"}]}` (above `start` input tokens, every token pays
the tier's price). The file is checked when it loads: an unknown field or a bad number names its place.
"""

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from genai_prices import types as gp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llmproxy.cassette import jsonpath
from llmproxy.errors import LlmproxyError


class _Tier(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    start: int = Field(ge=0, description="input tokens above which every token pays `price`")
    price: Decimal = Field(ge=0)


class _Tiered(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    base: Decimal = Field(ge=0)
    tiers: list[_Tier]


type _Price = Decimal | _Tiered


class _RuleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    model: str = Field(min_length=1)
    vendor: str | None = None
    since: date | None = None
    input_mtok: _Price | None = Field(None, ge=0)
    output_mtok: _Price | None = Field(None, ge=0)
    cache_read_mtok: _Price | None = Field(None, ge=0)
    cache_write_mtok: _Price | None = Field(None, ge=0)
    cache_write_1h_mtok: _Price | None = Field(None, ge=0)


class _PricesFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    prices: list[_RuleSpec]


class PriceRule:
    """One model's prices from the user's file, as the library's own `ModelPrice` (same arithmetic)."""

    def __init__(self, spec: _RuleSpec, origin: str) -> None:
        self.model = spec.model.lower()
        self.vendor = spec.vendor.lower() if spec.vendor else None
        self.since = spec.since
        self.origin = origin
        fields = ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok")
        self.price = gp.ModelPrice(**{name: _library_price(getattr(spec, name)) for name in fields})

    def applies(self, vendor: str | None, model: str, at: datetime) -> bool:
        if model.lower() != self.model or (self.vendor is not None and vendor != self.vendor):
            return False
        return self.since is None or at.astimezone(UTC).date() >= self.since

    def since_key(self) -> date:
        return self.since or date.min

    def describe(self) -> str:
        since = f" since {self.since.isoformat()}" if self.since else ""
        return f"{self.origin}: {self.vendor or 'any vendor'} {self.model}{since}"


def load_price_rules(path: Path) -> list[PriceRule]:
    """The rules in a prices file. Raises LlmproxyError naming the file and the place of a mistake."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LlmproxyError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        parsed = _PricesFile.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = jsonpath.render(error["loc"])
        raise LlmproxyError(f"{path}: {where}: {error['msg']}") from None
    return [PriceRule(spec, path.name) for spec in parsed.prices]


def _library_price(price: Any) -> Decimal | gp.TieredPrices | None:
    if isinstance(price, _Tiered):
        return gp.TieredPrices(price.base, [gp.Tier(tier.start, tier.price) for tier in price.tiers])
    return price if isinstance(price, Decimal) else None
