"""A history's digest: continued from the prefix a request shares, equal to the whole list's, and found without
walking back the chain of requests that shared it before."""

from datetime import UTC, datetime
from typing import Any

import orjson

from llmproxy.analysis.sources import HistoryDigests, _shared
from llmproxy.cassette.convert import to_exchange
from llmproxy.cassette.history import HistoryIndex
from llmproxy.cassette.model import Exchange
from llmproxy.cassette.redact import REDACTOR
from llmproxy.model.exchange import RawExchange, RawRequest

SYSTEM = {"role": "system", "content": "You are terse."}


def stored(number: int, messages: list[dict[str, Any]], index: HistoryIndex) -> Exchange:
    """A Chat Completions request as a report reads it: its history shared with an earlier one's."""
    body = orjson.dumps({"model": "gpt-4o", "messages": messages})
    headers = (("host", "api.openai.com"), ("content-type", "application/json"))
    request = RawRequest("POST", "https", "api.openai.com", 443, "/v1/chat/completions", "HTTP/1.1", headers,
                         body, None)  # fmt: skip
    raw = RawExchange(request, None, None, datetime.now(UTC), None, None)
    return _shared(to_exchange(raw, number, REDACTOR), index)


class Counted(dict[int, Any]):
    """The digests' chains, counting how often one is looked at."""

    looked = 0

    def __getitem__(self, key: int) -> Any:
        self.looked += 1
        return super().__getitem__(key)


def test_requests_sharing_one_prefix_each_with_the_last_walk_no_chain() -> None:
    """Every request re-sends the system prompt and asks something new: each extends the one before by that one
    item, a chain as long as the run. Finding the prefix's digest looks at a bounded number of links, not back
    to the first request (which made a report's time grow with the square of the requests)."""
    index, digests, alone = HistoryIndex(), HistoryDigests(), HistoryDigests()
    counted = digests._chains = Counted()
    requests = 300
    for number in range(1, requests + 1):
        messages = [SYSTEM, {"role": "user", "content": f"question {number}"}]
        exchange = stored(number, messages, index)
        if number > 1:
            assert exchange.request.extends is not None
            assert exchange.request.extends.exchange == number - 1
        whole = stored(number, messages, HistoryIndex())  # nothing shared: hashed from the first item
        assert digests.add(exchange) == alone.add(whole)
    assert counted.looked <= 2 * requests
