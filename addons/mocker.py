"""Answers requests from the expectations file (`llmproxy mock`): the engine picks the answer, the reply is
encoded in the requesting provider's format, and a paced stream goes through the loopback relay.

A request no expectation answers goes on to the replayer behind (a cassette given with `--cassette`), which
answers it or explains the miss; the mock's own reasons travel with the flow so the miss names both.
Nothing reaches the network. Clients that use the relay as their base URL get the same answers there,
without the cost of interception (`direct`).
"""

import logging
from collections.abc import Callable

from mitmproxy import http

from addons.flows import ANSWERED, MOCK_MISS, raw_request
from addons.stream_relay import Prepared, StreamRelay
from llmproxy.mock.engine import MockDecision, MockEngine, MockMiss
from llmproxy.mock.log import MockLog
from llmproxy.mock.reply import MockReply, reason_phrase
from llmproxy.mock.request import MockRequest, mock_request
from llmproxy.model.exchange import RawRequest

logger = logging.getLogger(__name__)


type Fallback = Callable[[RawRequest, str], Prepared]  # the replayer's answer to what no expectation answered


class Mocker:
    def __init__(self, engine: MockEngine, relay: StreamRelay, log: MockLog, fallback: Fallback) -> None:
        self.engine = engine
        self.relay = relay
        self.log = log
        self.fallback = fallback
        relay.direct = self.direct  # base-URL clients are answered on the relay, without the proxy

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None or flow.metadata.get(ANSWERED):
            return
        request = mock_request(raw_request(flow.request))
        outcome = self.engine.answer(request)
        if isinstance(outcome, MockMiss):  # the replayer behind answers it, or sends the miss
            self.log.missed(request, outcome)
            flow.metadata[MOCK_MISS] = outcome.explain()
            return
        decision, reply = outcome
        self._answered(request, decision, reply)
        flow.metadata[ANSWERED] = True
        self._send(flow, reply)

    def direct(self, raw: RawRequest) -> Prepared:
        """The answer to a request a base-URL client sent to the relay: the same as through the proxy."""
        request = mock_request(raw)
        outcome = self.engine.answer(request)
        if isinstance(outcome, MockMiss):
            self.log.missed(request, outcome)
            return self.fallback(raw, outcome.explain())
        decision, reply = outcome
        self._answered(request, decision, reply)
        chunks = list(reply.events) if reply.events is not None else [(0.0, reply.body or b"")]
        return Prepared(reply.status, reason_phrase(reply.status), reply.headers, chunks)

    def _answered(self, request: MockRequest, decision: MockDecision, reply: MockReply) -> None:
        self.log.answered(request, decision, reply)
        for note in reply.notes:
            logger.info("%s: %s", decision.source, note)
        for warning in reply.warnings:
            logger.warning("%s: %s", decision.source, warning)

    def _send(self, flow: http.HTTPFlow, reply: MockReply) -> None:
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in reply.headers]
        if reply.events is None or not any(at > 0 for at, _ in reply.events):
            body = reply.body if reply.events is None else b"".join(data for _, data in reply.events)
            flow.response = http.Response.make(reply.status, body or b"", http.Headers(headers))
            return
        self.relay.serve(flow, Prepared(reply.status, reason_phrase(reply.status), reply.headers, reply.events))
