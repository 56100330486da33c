"""Counted nouns in what llmproxy prints: "1 request", "2 requests", "1,024 exchanges"."""


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`count` and `noun`, in the plural unless it is one (`nouns`: an irregular plural, "statuses")."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


def clip(text: str, limit: int) -> str:
    """`text` on one line (runs of white space made one space) in at most `limit` characters: cut after the
    last whole word that fits, "…" saying it was cut; a single word longer than that is cut inside."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    cut = head.rsplit(" ", 1)[0] if " " in head and flat[limit - 1] != " " else head
    return cut.rstrip(" ,;:.-") + "…"
