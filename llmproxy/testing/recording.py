"""What a test's cassette holds: what the upstream answered, and nothing in its place — the cassette stands in
for the upstream when the test runs again, so it holds what the upstream really said, as vcrpy and
pytest-recording keep no interaction for a request that raised.

* A request the upstream never answered whole (refused, a name that does not resolve, hung up on, the client's
  timeout, a stream that broke off) is not recorded but noted: the test's recording is not whole, and the
  plugin keeps none of it and fails the test (`worker.Turn.end`). A failure recorded would be replayed as the
  answer, forever.
* A fault the test's chaos injected in the upstream's place (an error, a quota, a dropped connection, a wrong
  answer of llmproxy's own) is not recorded: replayed under the same chaos, the chaos injects it again.
  (`llmproxy record` keeps such faults, marked, to show what the client went through; a test's cassette is
  what the test replays.) An answer the chaos changed on its way (delayed, cut, corrupted) is the upstream's
  answer: it is recorded, marked, as `llmproxy record` records it, and replay serves it under chaos too.
* What the expectations answered never reaches a recording: the record tap keeps only what the upstream and
  the chaos answered.
"""

import threading

from llmproxy.cassette.convert import request_line
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, RecordSummary
from llmproxy.cassette.unanswered import unanswered
from llmproxy.intercept.faults import STANDING_IN
from llmproxy.model.exchange import RawExchange


class AnswersOnly:
    """The record tap's sink for one test (`llmproxy.chain.taps.record.Sink`): the test's cassette writer, given
    the upstream's answers only. Called on the proxy's thread as each exchange ends."""

    def __init__(self, writer: CassetteWriter, redactor: Redactor) -> None:
        self.writer = writer
        self._redactor = redactor
        self._lock = threading.Lock()
        self.recorded = 0  # answers handed to the writer
        self.unanswered: list[str] = []  # "no answer from the upstream to POST https://… (why)", redacted

    def put(self, exchange: RawExchange) -> None:
        """`add`, as the record tap hands exchanges over (the writer's queue has no bound to wait for)."""
        self.add(exchange)

    def add(self, exchange: RawExchange) -> None:
        if self._answer(exchange):
            self.writer.add(exchange)

    def start(self) -> None:
        self.writer.start()

    def close(self) -> RecordSummary:
        return self.writer.close()

    def _answer(self, exchange: RawExchange) -> bool:
        if any(fault.get("kind") in STANDING_IN for fault in exchange.injected):
            return False
        with self._lock:
            if unanswered(exchange) is None:  # a cut the chaos made is not the upstream failing
                self.recorded += 1
                return True
            what = "no answer" if exchange.response is None else "an answer cut short"
            request, why = request_line(exchange.request, self._redactor), self._redactor.text(exchange.error or "")
            self.unanswered.append(f"{what} from the upstream to {request} ({why})")
            return False
