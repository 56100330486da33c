"""What `llmproxy record`'s answer chain costs the proxy's event loop per exchange, in one process: a forwarded
200 KB request and its 200 KB JSON answer through the chain as the proxy door drives it (nothing answers; the
record and journal taps watch), the cassette writer left out (it runs in a process of its own).

    .venv/bin/python scripts/bench/record_chain.py [--exchanges 100]

Prints the CPU time per exchange, after three that warm up. Run it from another source tree (`cd BEFORE &&
python …/record_chain.py`) to compare: it imports llmproxy from the working directory first. mitmproxy's own
work on the flow, the same for `mitmdump`, is not in it.
"""

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path[:0] = [".", str(Path(__file__).parent)]

from payloads import reply, sized_request  # noqa: E402

from llmproxy.cassette.redact import Redactor  # noqa: E402
from llmproxy.chain import Chain, Context, Door, Incoming, ResponseHead  # noqa: E402
from llmproxy.chain.incoming import Upstream  # noqa: E402
from llmproxy.chain.taps.journal import JournalTap  # noqa: E402
from llmproxy.chain.taps.record import RecordTap  # noqa: E402
from llmproxy.journal import Journal  # noqa: E402
from llmproxy.model.exchange import RawExchange, RawRequest, RawResponse  # noqa: E402
from llmproxy.record_scope import RecordScope  # noqa: E402

HEADERS = (("host", "127.0.0.1:9"), ("content-type", "application/json"), ("anthropic-version", "2023-06-01"))
ANSWER_HEADERS = (("content-type", "application/json"),)


class Dropped:
    """The writer's `put`: the exchange handed over, and nothing else done with it here."""

    def put(self, exchange: RawExchange) -> None:
        return None


async def exchange(chain: Chain, body: bytes, answer: bytes) -> None:
    """One request through the chain as the proxy door drives it: answered by the upstream, observed, ended."""
    raw = RawRequest("POST", "http", "127.0.0.1", 9, "/v1/messages", "HTTP/1.1", HEADERS, body, None)
    incoming = Incoming(raw, Door.PROXY, Upstream("127.0.0.1", 9, ("127.0.0.1:9", None)))
    if chain.answer(incoming, Context(Door.PROXY)) is not None:
        sys.exit("the chain answered a request it should forward")
    observers = chain.observe(incoming, ResponseHead.of(incoming, 200, ANSWER_HEADERS, time.time()))
    assert observers is not None
    response = RawResponse(200, "OK", "HTTP/1.1", ANSWER_HEADERS, answer, None, None)
    await observers.end(RawExchange(raw, response, None, datetime.now(UTC), 1.0, 2.0))
    chain.ended(incoming)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--exchanges", type=int, default=100)
    options = parser.parse_args()
    body, answer = sized_request(200_000), reply(200_000)
    sink = Dropped()
    chain = Chain([], [RecordTap(RecordScope(), sink), JournalTap(Journal(1000), Redactor())])  # type: ignore[arg-type]
    for _ in range(3):
        await exchange(chain, body, answer)
    start = time.process_time()
    for _ in range(options.exchanges):
        await exchange(chain, body, answer)
    elapsed = time.process_time() - start
    print(f"{elapsed / max(options.exchanges, 1) * 1e3:.3f} ms of CPU an exchange")


if __name__ == "__main__":
    asyncio.run(main())
