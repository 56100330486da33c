"""How numbers are written: money exact in JSON, readable for people; ratios to four places."""

from decimal import ROUND_HALF_EVEN, Decimal

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
