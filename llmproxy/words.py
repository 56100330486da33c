"""Counted nouns in what llmproxy prints: "1 request", "2 requests", "1,024 exchanges"."""


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`count` and `noun`, in the plural unless it is one (`nouns`: an irregular plural, "statuses")."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"
