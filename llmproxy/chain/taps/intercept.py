"""The intercept tap (docs/chaos.md): first on the response side, so what it changes is what the client gets and
what a recording keeps. For a request the intercept stage let through it

* shapes the answer: a replayed or mocked reply's events cut, corrupted, delayed or dribbled (its door sends
  them on their schedule); a live upstream stream cut or corrupted as it passes (`LiveShaper`);
* stamps the quota's rate-limit headers on a successful reply (the door does it for a live one);
* charges the answer's tokens to the token quotas and its cost to the budget.

A mock turn's own `chaos` is decided here, once the mock has chosen the turn, and may replace the reply.
Every fault it puts in is counted, marked on the request for the recording, and followed by the aftermath.
"""

import logging
from datetime import UTC, datetime

from llmproxy.cassette.convert import request_line
from llmproxy.cassette.decoding import decoder_for
from llmproxy.cassette.redact import REDACTOR
from llmproxy.cassette.stream_capture import Framing, framing
from llmproxy.chain.incoming import Door, Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stage import CutStream, Observer, ResponseHead, Tap
from llmproxy.chain.stages.intercept import FaultReplies, mark
from llmproxy.chain.state import State
from llmproxy.intercept.decision import Misbehaved, Pending, Through
from llmproxy.intercept.engine import Intercept
from llmproxy.intercept.events import EventSplitter
from llmproxy.intercept.faults import FaultKind, Injected
from llmproxy.intercept.shaping import LiveShaper, Shaping
from llmproxy.model import Usage
from llmproxy.model.exchange import RawExchange

logger = logging.getLogger(__name__)

_ANSWERED = frozenset({ReplySource.MOCK, ReplySource.CASSETTE, ReplySource.UPSTREAM})


class InterceptTap(Tap):
    name = "intercept"
    EXPLAINED = "stream faults, rate-limit headers, token quotas and the budget on what answers"  # also a plan's

    def __init__(self, engine: State[Intercept]) -> None:
        """`engine`: the intercept stage's, so that both always use the same engine."""
        self.state = engine
        self.faults = FaultReplies()  # for a mock turn's faults

    @property
    def engine(self) -> Intercept:
        return self.state.value

    def reply(self, incoming: Incoming, reply: Reply) -> Reply:
        if incoming.chaos is not None and reply.source in _ANSWERED:
            reply = self._turn_chaos(incoming, reply)
        pending = incoming.intercepted
        if pending is None:
            return reply
        if pending.attempt is not None:
            self.engine.aftermath.answered(pending.attempt, 0 if reply.drop else reply.status)
        if reply.source not in _ANSWERED:
            return reply
        through, engine = pending.through, self.engine
        now = engine.clock()
        changed: dict[str, object] = {}
        if through.limits is not None and 200 <= reply.status < 300:
            stamped = dict(through.limit_headers(incoming.route, datetime.fromtimestamp(now, UTC)))
            changed["headers"] = (*((n, v) for n, v in reply.headers if n.lower() not in stamped), *stamped.items())
        if through.shaping is not None and 200 <= reply.status < 300:
            changed.update(self._shaped(incoming, pending, reply, through.shaping, through.shaped_by))
        if through.charges or through.spend:
            self._settle(incoming, through, reply.usage)
        if not changed:
            return reply
        return reply._replace(**changed, shared=False)  # type: ignore[arg-type]

    def open(self, incoming: Incoming, head: ResponseHead | None) -> Observer | None:
        pending = incoming.intercepted
        if pending is None:
            return None
        if pending.attempt is not None:
            self.engine.aftermath.answered(pending.attempt, head.status if head is not None else 0)
        if head is None or pending.through.idle:
            return None
        return _LiveAnswer(self, incoming, pending, head)

    def explain(self) -> str:
        return self.EXPLAINED

    def _turn_chaos(self, incoming: Incoming, reply: Reply) -> Reply:
        """A mock turn's profile, decided now that the turn is known: it may replace the answer."""
        attached = incoming.chaos
        assert attached is not None
        engine = self.engine
        pending = incoming.intercepted
        attempt = pending.attempt if pending is not None else None
        if attempt is None:
            attempt = engine.aftermath.seen(incoming.body, engine.clock(), incoming.route is not None)
        decision = engine.decide(incoming, turn=(attached.name, attached.profile))
        if isinstance(decision, Through):
            if (
                pending is None or pending.attempt is not attempt or not decision.idle
            ):  # the attempt kept, for its answer
                incoming.intercepted = Pending(_joined(pending.through, decision) if pending else decision, attempt)
            return reply
        mark(engine, incoming, attempt, decision.fault)
        if attached.take_back is not None and not isinstance(decision, Misbehaved):
            attached.take_back()  # the client did not get this turn: it gets it when it asks again
        return self.faults.reply(decision, incoming, engine.clock())

    def _shaped(
        self, incoming: Incoming, pending: Pending, reply: Reply, shaping: Shaping, rule: str
    ) -> dict[str, object]:
        """A whole reply's body or events as the shaping leaves them, with the faults that took."""
        kind = framing(reply.header("content-type") or "")
        events = reply.events
        if events is None and kind is not Framing.CHUNKS and reply.body:  # a stream sent at once: its events
            events = tuple((0.0, event) for event in _split(reply.body, kind))
        messages = incoming.door is Door.WEBSOCKET  # each event one message: a whole event, whatever its type
        faults: list[Injected] = []
        if events is not None and (kind is not Framing.CHUNKS or messages):
            shaped, cut = shaping.events(events, kind)
            if cut:
                faults.append(Injected(FaultKind.TRUNCATE, rule, f"stream cut after {_kept(shaped, shaping)} events"))
            if shaping.malformed_after is not None and shaped:
                faults.append(
                    Injected(FaultKind.MALFORMED, rule, f"a broken event after {shaping.malformed_after} events")
                )
        elif shaping.delays and reply.body is not None:
            shaped, cut = shaping.body(reply.body), False
        else:
            return {}
        if shaping.first_byte or shaping.per_event:
            faults.append(
                Injected(
                    FaultKind.LATENCY,
                    rule,
                    f"{shaping.first_byte:.3f} s to the first byte, +{shaping.per_event:.3f} s per event",
                )
            )
        if shaping.chunk:
            faults.append(
                Injected(FaultKind.SLOW_BODY, rule, f"{shaping.chunk} bytes every {shaping.chunk_delay:.3f} s")
            )
        for fault in faults:
            self.engine.count(fault)
            mark(self.engine, incoming, pending.attempt, fault)
        return {"events": shaped, "body": None, "cut": cut} if faults else {}

    def _settle(self, incoming: Incoming, through: Through, usage: Usage | None) -> None:
        route = incoming.route
        try:
            url = f"{incoming.raw.scheme}://{incoming.host}{incoming.path}"
            self.engine.settle(through, usage, incoming.model, route, url, route.vendor if route is not None else None)
        except Exception:  # observing fails open: a counter that failed never breaks the answer
            logger.exception("could not charge the quotas or the budget for %s", request_line(incoming.raw, REDACTOR))


class _LiveAnswer:
    """The upstream's answer to a request let through, as it passes: cut or corrupted by whole events, and
    kept (when its usage is to be charged) to be read at the end."""

    __slots__ = ("decoder", "incoming", "kept", "pending", "shaper", "streamed", "tap")

    def __init__(self, tap: InterceptTap, incoming: Incoming, pending: Pending, head: ResponseHead) -> None:
        self.tap = tap
        self.incoming = incoming
        self.pending = pending
        self.streamed = head.streamed
        through = pending.through
        shaping = through.shaping
        live = shaping is not None and (shaping.cut is not None or shaping.malformed_after is not None)
        encoded = head.header("content-encoding")
        kind = framing(head.header("content-type") or "") if not encoded else Framing.CHUNKS
        ok = 200 <= head.status < 300
        self.shaper = LiveShaper(shaping, kind) if shaping is not None and live and ok and head.streamed else None
        self.kept: list[bytes] | None = [] if (through.charges or through.spend) else None
        self.decoder = decoder_for(encoded) if encoded and self.kept is not None else None

    def chunk(self, data: bytes, at: float) -> bytes:
        if self.shaper is not None:
            before = self.shaper.corrupted
            data, cut = self.shaper.chunk(data)
            rule = self.pending.through.shaped_by
            if self.shaper.corrupted and not before:
                self._fault(Injected(FaultKind.MALFORMED, rule, "a broken event in the live stream"))
            if cut:
                self._fault(Injected(FaultKind.TRUNCATE, rule, f"live stream cut after {self.shaper.sent} events"))
                self._keep(data)
                raise CutStream(data)
        self._keep(data)
        return data

    async def end(self, exchange: RawExchange) -> None:
        through = self.pending.through
        if self.kept is None:
            return
        response = exchange.response
        usage = None
        codec = self.incoming.codec
        if response is not None and codec is not None and 200 <= response.status < 300:
            try:
                data = b"".join(self.kept) if self.streamed else response.body or b""
                if self.decoder is not None and self.streamed:
                    data = self.decoder.decode(data) + self.decoder.flush()
                completion = codec.decode_stream([data]) if self.streamed else codec.decode_response(data)
                usage = completion.usage
            except Exception:
                logger.debug("could not read the usage of %s", request_line(self.incoming.raw, REDACTOR), exc_info=True)
        self.tap._settle(self.incoming, through, usage)

    def _keep(self, data: bytes) -> None:
        if self.kept is not None and data:
            self.kept.append(data)

    def _fault(self, fault: Injected) -> None:
        self.tap.engine.count(fault)
        mark(self.tap.engine, self.incoming, self.pending.attempt, fault)


def _joined(request: Through, turn: Through) -> Through:
    """What the request's profiles and the turn's both ask of one answer: the turn's shaping first."""
    return Through(
        turn.shaping or request.shaping,
        turn.shaped_by if turn.shaping is not None else request.shaped_by,
        request.limits or turn.limits,
        (*request.charges, *turn.charges),
        request.spend or turn.spend,
    )


def _split(body: bytes, kind: Framing) -> list[bytes]:
    splitter = EventSplitter(kind)
    events = splitter.feed(body)
    rest = splitter.rest()
    return [*events, rest] if rest else events


def _kept(shaped: tuple[tuple[float, bytes], ...], shaping: Shaping) -> int:
    return len(shaped) - (1 if shaping.malformed_after is not None and shaped else 0)
