"""How numbers are written: money exact in JSON, readable for people; ratios to four places. And the run's
cost and verdict in words, the same in every renderer for people."""

from decimal import ROUND_HALF_EVEN, Decimal
from typing import TYPE_CHECKING

from llmproxy.words import plural

if TYPE_CHECKING:  # the live display writes dollars without loading the report's models
    from llmproxy.analysis.report import Totals, Verdict

_JSON_PLACES = Decimal("1e-10")


def money(amount: Decimal) -> str:
    """A JSON money string: ten decimal places at most, no exponent, no trailing zeros ("0.00675")."""
    text = format(amount.quantize(_JSON_PLACES, rounding=ROUND_HALF_EVEN).normalize(), "f")
    return "0" if text in ("-0", "0") else text


def dollars(amount: Decimal) -> str:
    """For people: cents from a dollar up, four places below ("$1.42", "$0.0135")."""
    places = Decimal("0.01") if abs(amount) >= 1 or amount == 0 else Decimal("0.0001")
    return f"${amount.quantize(places, rounding=ROUND_HALF_EVEN):,}"


def ratio(value: float) -> float:
    return round(value, 4)


def percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def spend(totals: "Totals") -> str:
    """The run's cost for people: "$0.0108", "$0.0108 (estimate)"; "unpriced" when calls were made and none
    could be priced (the JSON's total is then "0": nothing priced, never a cost of $0)."""
    if totals.unpricedCallCount and not totals.pricedCallCount:
        return "unpriced"
    return dollars(Decimal(totals.estimatedCostUsd)) + (" (estimate)" if totals.costIsEstimated else "")


def calls_aside(totals: "Totals") -> str:
    """What a count of calls needs beside it: " (3 failed, 1 unpriced)", or nothing. (With none priced, the
    cost itself says "unpriced".)"""
    unpriced = totals.unpricedCallCount if totals.pricedCallCount else 0
    notes = [
        f"{count:,} {what}" for count, what in ((totals.failedCallCount, "failed"), (unpriced, "unpriced")) if count
    ]
    return f" ({', '.join(notes)})" if notes else ""


def verdict_sentence(verdict: "Verdict") -> str:
    """The rationale as a sentence after the grade ("An estimated 48% of spend … is recoverable …")."""
    text = verdict.rationale.removeprefix(f"Grade {verdict.grade} — ")
    return text[:1].upper() + text[1:]


def grade_change(drop: int) -> str:
    """A baseline comparison's grade drop in words: "down 3 letters", "up 1 letter", "unchanged"."""
    if not drop:
        return "unchanged"
    return f"{'down' if drop > 0 else 'up'} {plural(abs(drop), 'letter')}"
