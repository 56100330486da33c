"""A request the upstream never answered whole — the connection refused, a host name that does not resolve, a
reset, a hang-up, the client's own timeout, a stream that broke off — and why, in a few words.

Such an exchange holds no answer: replayed, its failure would stand for the upstream's answer for ever, so a
recording leaves it out (as vcrpy keeps nothing for a request that raised) and names it instead, unless asked to
record an outage (`--record-unanswered`). A fault llmproxy's chaos injected is not one: it is there on purpose.
"""

from llmproxy.model.exchange import RawExchange

_REASONS: tuple[tuple[tuple[str, ...], str], ...] = (  # what mitmproxy and the OS say (lower-cased) → the words
    (("connect call failed", "connection refused", "errno 111", "econnrefused"), "connection refused"),
    (
        (
            "name or service not known",
            "temporary failure in name resolution",
            "nodename nor servname",
            "no address associated with hostname",
            "getaddrinfo failed",
        ),
        "the host name does not resolve",
    ),
    (("connection reset", "errno 104", "econnreset"), "connection reset"),
    (("client disconnected",), "the client stopped waiting"),  # its timeout, or it was stopped
    (("timed out", "timeout"), "timed out"),
    (("certificate", "ssl", "tls"), "the TLS handshake failed"),
    (
        ("server closed connection", "server disconnected", "peer closed connection", "connection ended"),
        "the upstream closed the connection",
    ),
)
_LONGEST = 160  # an error said as it came, when none of the above


def unanswered(exchange: RawExchange) -> str | None:
    """Why `exchange` holds no whole answer from the upstream; None when it does, or when what cut it short was
    a fault injected on purpose."""
    if exchange.error is None or exchange.injected:
        return None
    why = reason(exchange.error)
    return why if exchange.response is None else f"the answer broke off: {why}"


def reason(error: str) -> str:
    """An upstream or connection error in a few words (the error itself when it is none of the usual ones)."""
    lowered = error.lower()
    for needles, words in _REASONS:
        if any(needle in lowered for needle in needles):
            return words
    return error if len(error) <= _LONGEST else error[: _LONGEST - 1] + "…"
