"""The intercept stage (docs/chaos.md): first on the request side, on both doors. It asks the `Intercept` what a
request meets — a refusal (an injected error, a quota, the budget), a dropped connection, a misbehaving
model, or nothing before its answer — and answers the first three itself. For a request let through it
leaves the decision on the request for the intercept tap (which shapes the answer, stamps the rate-limit
headers and charges the quotas and budget), and tells the door how to forward it: held back by the latency,
without llmproxy's own `x-llmproxy-chaos` header, asking for an unencoded stream when the stream is to be cut.

With nothing configured it costs one look at the request's headers.
"""

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

import orjson

from llmproxy.chain.incoming import Forwarding, Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stage import Context, Stage
from llmproxy.chain.state import State
from llmproxy.errors import ChaosError
from llmproxy.intercept.aftermath import Attempt
from llmproxy.intercept.decision import PASS, Dropped, Misbehaved, Pending, Refusal, Through
from llmproxy.intercept.engine import OVERRIDE, Intercept
from llmproxy.intercept.faults import Injected
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import parse_profile
from llmproxy.intercept.summary import summary_lines
from llmproxy.model import Completion, ErrorKind, ProviderError, Route
from llmproxy.providers.registry import error_encoder
from llmproxy.words import plural

if TYPE_CHECKING:  # pricing is imported only when a budget needs it
    from llmproxy.intercept.budget import Spend

logger = logging.getLogger(__name__)

_STRIP: tuple[tuple[str, str | None], ...] = ((OVERRIDE, None),)


class InterceptStage(Stage):
    name = "intercept"

    def __init__(self, engine: Intercept, source: str = "") -> None:
        self.state = State(engine)  # swapped whole while running (a pytest test's chaos); the tap shares it
        self.source = source  # what configured it, for explain()
        self._standing: Spend | None = None  # the budget's, read as its store was let go
        self.faults = FaultReplies()

    @property
    def engine(self) -> Intercept:
        return self.state.value

    def use(self, engine: Intercept, source: str = "") -> Intercept:
        """Decide with `engine` from the next request on (a pytest test's chaos); the engine it replaces."""
        self.source = source
        return self.state.swap(engine)

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        header = incoming.headers.get(OVERRIDE)  # the headers read once, for every stage
        engine = self.state.value
        if header is None and not engine.active:
            return None
        override: ChaosProfile | None = None
        if header is not None:
            incoming.forwarding = Forwarding(request_headers=_STRIP)
            try:
                override = parse_profile(orjson.loads(header), OVERRIDE)
            except orjson.JSONDecodeError as error:
                return _bad_header(incoming, f"{OVERRIDE}: not JSON: {error}")
            except ChaosError as error:  # already says where: "x-llmproxy-chaos: …"
                return _bad_header(incoming, str(error))
        decision = engine.decide(incoming, override)
        aftermath = engine.aftermath
        llm = incoming.route is not None  # what else a client sends (telemetry) is not it going on
        if decision is PASS:  # untouched: it matters only as a retry of a fault still open, or what came after one
            if aftermath.watching and engine.active:  # its answer is for the tap to note
                incoming.intercepted = Pending(decision, aftermath.seen(incoming.body, engine.clock(), llm))
            return None
        attempt = aftermath.seen(incoming.body, engine.clock(), llm) if engine.active else None
        if isinstance(decision, Through):
            incoming.intercepted = Pending(decision, attempt)
            incoming.forwarding = _forwarding(decision, header is not None, incoming, engine.clock())
            return None
        mark(engine, incoming, attempt, decision.fault)
        engine.stand_in()
        return self.faults.reply(decision, incoming, engine.clock())

    def explain(self) -> str:
        engine = self.engine
        parts = [plural(len(engine.rules), "rule") if engine.rules else "", "a budget" if engine.budget else ""]
        what = " and ".join(part for part in parts if part) or "nothing yet"
        source = f" ({self.source})" if self.source else ""
        return f"chaos, quotas and budget: {what}{source}; counters {engine.store.describe()}"

    def close(self) -> None:
        """The counters' store let go (a Redis connection), the budget's last standing kept for the summary."""
        engine = self.engine
        self._standing = engine.budget.standing() if engine.budget is not None else None
        engine.store.close()

    def summary(self) -> list[str]:
        return summary_lines(self.engine, self._standing)


def mark(engine: Intercept, incoming: Incoming, attempt: Attempt | None, fault: Injected) -> None:
    """A fault went into `incoming`'s answer: for the recording, and for what the client does next (named in
    the summary by its method, host and path: "POST api.anthropic.com/v1/messages", never its query)."""
    incoming.injected.append(fault)
    if attempt is not None:
        engine.aftermath.faulted(attempt, fault, f"{incoming.method} {incoming.host}{incoming.path}")


class FaultReplies:
    """What the intercept answers in the upstream's place: a refusal in the requesting API's shape, a dropped
    connection, or a misbehaving model's answer. A refusal that does not depend on the moment (no rate-limit
    state, no retry-after date) is encoded once per API and served again, like a recording (`shared`): kept
    here, for as long as its owner (the intercept stage, or the tap) lives, `KEEP` of them at most."""

    KEEP: Final = 256

    def __init__(self) -> None:
        self._kept: dict[tuple[Refusal, object], Reply] = {}

    def reply(self, decision: Refusal | Dropped | Misbehaved, incoming: Incoming, now: float) -> Reply:
        if isinstance(decision, Refusal):
            return self.refusal(decision, incoming, now)
        if isinstance(decision, Dropped):
            return Reply(0, (), source=ReplySource.FAULT, drop=True)
        return _misbehaving(decision, incoming)

    def refusal(self, refusal: Refusal, incoming: Incoming, now: float) -> Reply:
        route = incoming.route
        if refusal.limits is not None or (refusal.retry is not None and refusal.retry.date is not None):
            return _encoded(refusal, route, now)
        key = (refusal, error_encoder(route) if route is not None else None)  # equal refusals, equal replies
        kept = self._kept.get(key)
        if kept is None:
            if len(self._kept) >= self.KEEP:
                self._kept.clear()
            kept = self._kept[key] = _encoded(refusal, route, now)._replace(shared=True)
        return kept


def _encoded(refusal: Refusal, route: Route | None, now: float) -> Reply:
    status, headers, body = refusal.response(route, datetime.fromtimestamp(now, UTC))
    failed = Completion(stop_reason=None, error=ProviderError(refusal.kind, refusal.message, None, status))
    return Reply(status, headers, body, source=ReplySource.FAULT, completion=failed)


def _misbehaving(misbehaved: Misbehaved, incoming: Incoming) -> Reply:
    """The wrong answer in the requesting API's format, streamed when the request asks for a stream."""
    codec, route = incoming.codec, incoming.route
    assert codec is not None  # the engine faults only chat requests this way
    assert route is not None
    request = incoming.json if isinstance(incoming.json, dict) else None
    completion = misbehaved.completion
    if route.streaming:
        events = codec.encode_stream(completion, request)
        headers = (("content-type", codec.stream_media_type), ("cache-control", "no-cache"))
        return Reply(200, headers, b"".join(events), source=ReplySource.FAULT, completion=completion)
    body = codec.encode_response(completion, request)
    return Reply(200, (("content-type", "application/json"),), body, source=ReplySource.FAULT, completion=completion)


def _forwarding(through: Through, strip: bool, incoming: Incoming, now: float) -> Forwarding | None:
    """How the door sends a request let through upstream: after the latency's first-byte delay, with the
    answer's rate-limit headers; with an unencoded stream when it is to be cut or corrupted (events must be
    found in it)."""
    shaping = through.shaping
    request_headers: list[tuple[str, str | None]] = list(_STRIP if strip else ())
    if shaping is not None and (shaping.cut is not None or shaping.malformed_after is not None):
        request_headers.append(("accept-encoding", "identity"))
    wait = shaping.first_byte if shaping is not None else 0.0
    answer_headers = through.limit_headers(incoming.route, datetime.fromtimestamp(now, UTC))
    if not (request_headers or wait or answer_headers):
        return None
    return Forwarding(wait, tuple(request_headers), answer_headers)


def _bad_header(incoming: Incoming, message: str) -> Reply:
    """A malformed `x-llmproxy-chaos` is the test's mistake: a 400 saying so, in the API's error shape."""
    logger.warning("%s", message)
    route = incoming.route
    if route is None:
        return Reply(400, (("content-type", "text/plain; charset=utf-8"),), message.encode(), source=ReplySource.ERROR)
    error = error_encoder(route)(ErrorKind.INVALID_REQUEST, message)
    return Reply(400, tuple(error.headers.items()), error.body, source=ReplySource.ERROR)
