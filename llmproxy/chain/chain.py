"""The answer chain: the one place a request's path is decided, whichever door it came through.

The order is declared here, once. On the request side each stage in turn may answer; if none does, the
request goes upstream when the plan opens the network to it and the door can forward it, and is refused
otherwise — with the reasons every stage gave. On the response side, taps see what answers: a stage's reply
whole, or the upstream's answer as it arrives.

    request side:  intercept → mock → replay → background → (upstream, or refused)
    response side: intercept → record → meter → journal

A slot with no stage in it costs nothing; `explain()` prints the chain a plan built (`--explain-chain`).

Every call into a stage, a tap or an observer is made here, and what it raises is caught here, as mitmproxy's
addon manager catches what an addon raises (`safecall`): a stage that fails answers with llmproxy's own error
(fail closed), a tap or an observer that fails is logged and the answer goes on without it (fail open), and a
step that cannot close does not keep the others from closing.
"""

import contextlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from llmproxy.cassette.convert import request_line
from llmproxy.cassette.redact import REDACTOR, Redactor
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.misses import jsonrpc_miss_reply, miss_reply
from llmproxy.chain.reply import Reply, ReplySource, text_reply
from llmproxy.chain.stage import Context, CutStream, Explains, Observer, ResponseHead, Stage, Summarises, Tap
from llmproxy.egress import EgressPolicy, Refused, is_loopback
from llmproxy.errors import LlmproxyError
from llmproxy.model.exchange import RawExchange
from llmproxy.providers.registry import websocket_codec
from llmproxy.tool_protocols import protocol

logger = logging.getLogger(__name__)

REQUEST_SIDE: Final = ("intercept", "mock", "replay", "background")
"""Request-side slots, in order: faults and quotas before anything answers, expectations before recordings,
and what the coding CLIs send beside their model calls answered last, only when nothing else does."""
RESPONSE_SIDE: Final = ("intercept", "record", "meter", "journal")
"""Response-side slots, in order: what a fault changes is what the client gets, so it is what is recorded
(and what the journal keeps for the control API)."""


NO_ENTRIES: Final = EgressPolicy()


@dataclass(frozen=True, slots=True)
class Network:
    """Which requests nothing answered may reach their upstream (everything, or what `--allow-host` lets out,
    judged by where the connection really goes: `llmproxy.egress`); the others are refused (`llmproxy.chain.misses`:
    the API's own invalid-request error, not to be retried, unless `miss_status` names another status)."""

    everything: bool = False  # record modes that forward: all, new_episodes
    egress: EgressPolicy = NO_ENTRIES  # --allow-host
    miss_status: int | None = None

    def refusal(self, incoming: Incoming) -> Refused | None:
        """Why `incoming` may not go out; None when it may."""
        if self.everything:
            return None
        upstream = incoming.upstream
        if upstream is None:
            return Refused("this door cannot send a request upstream")
        return self.egress.check_request(
            upstream.host, upstream.port, upstream.asserted, llm_api=incoming.api is not None
        )

    def explain(self) -> str:
        if self.everything:
            return "upstream: what nothing answered goes to the network"
        allowed = [f"{', '.join(map(str, self.egress.entries))} (--allow-host)"] if self.egress.entries else []
        if self.egress.local_services:
            allowed.append("this machine's own services (loopback, but for LLM API calls)")
        if allowed:
            return f"upstream: only {' and '.join(allowed)}; the rest refused with {self.refused_with}"
        return f"upstream: closed; what nothing answered is refused with {self.refused_with}"

    @property
    def refused_with(self) -> str:
        return str(self.miss_status) if self.miss_status is not None else "the API's invalid-request error (400)"


FORWARD: Final = Network(everything=True)


class Chain:
    def __init__(
        self,
        stages: Sequence[Stage] = (),
        taps: Sequence[Tap] = (),
        network: Network = FORWARD,
        redactor: Redactor = REDACTOR,
    ) -> None:
        self.stages = _ordered(stages, REQUEST_SIDE, "stage")
        self.taps = _ordered(taps, RESPONSE_SIDE, "tap")
        # what may change while running, each replaced whole (as a `State` is) and read per request as a plain
        # attribute: a property of a property is most of what the chain itself costs a request
        self._network = network
        self._test_id: str | None = None
        self.redactor = redactor
        self.refusals = 0  # requests refused: nothing answered and the network was closed to them
        self._lock = threading.Lock()
        self._upstream: set[Incoming] = set()  # sent upstream, their answer not ended yet (`ended`)
        self._upstream_done = threading.Condition(self._lock)
        self._reply_taps = [tap for tap in self.taps if type(tap).reply is not Tap.reply]
        self._live_taps = [tap for tap in self.taps if type(tap).open is not Tap.open]

    @property
    def network(self) -> Network:
        """Which requests nothing answered may go upstream: read once per request, swapped whole by
        `use_network`."""
        return self._network

    def use_network(self, network: Network) -> Network:
        """Open or close the network from the next request on (the pytest plugin, between a test that
        records and one that replays); the network it replaces."""
        with self._lock:
            previous, self._network = self._network, network
        return previous

    def add(self, stage: Stage) -> None:
        """Put `stage` in its slot while running (the control API loads a cassette into a run that had no replay
        stage): the requests that come next meet it. Raises ValueError when its slot is taken."""
        with self._lock:
            self.stages = _ordered([*self.stages, stage], REQUEST_SIDE, "stage")  # swapped whole: readers see one

    def use_test_id(self, test_id: str | None) -> str | None:
        """Take the requests that carry no `x-llmproxy-test-id` of their own for `test_id`'s from the next request
        on (the pytest plugin, as each test begins and ends), so that its expectations answer them and the
        journal files them under it; the id it replaces."""
        with self._lock:
            previous, self._test_id = self._test_id, test_id
        return previous

    @property
    def answers(self) -> bool:
        """Whether anything but the upstream can answer (a chain that only records does not)."""
        return bool(self.stages) or not self.network.everything

    def serves_websocket(self, incoming: Incoming) -> bool:
        """Whether a WebSocket upgrade is answered here, each request message on it an `Incoming` of its own
        (`Door.WEBSOCKET`) — the API is one llmproxy reads message by message, something but the upstream
        answers, and the network does not take it — rather than going to the network whole: a WebSocket cannot
        be half answered here, half forwarded."""
        route = incoming.api  # a WebSocket's API is told by its upgrade request's URL and headers
        return (
            route is not None
            and route.websocket
            and bool(self.stages)
            and websocket_codec(route) is not None
            and self.network.refusal(incoming) is not None
        )

    def answer(self, incoming: Incoming, context: Context) -> Reply | None:
        """The reply to `incoming`, or None: send it upstream (and `observe` the answer)."""
        network = self._network
        if incoming.test_id is None:
            incoming.test_id = self._test_id
        try:
            for stage in self.stages:
                reply = stage.decide(incoming, context)
                if reply is not None:
                    if incoming.declines:
                        self._answered_after(incoming, reply.source)
                    break
            else:
                refusal = network.refusal(incoming) if context.forwards else None
                if context.forwards and refusal is None:
                    with self._lock:
                        self._upstream.add(incoming)
                    self._answered_after(incoming, ReplySource.UPSTREAM)
                    return None
                upstream = incoming.upstream
                local = upstream is not None and is_loopback(upstream.host)  # the refusal says how to let it out
                kept_in = refusal.reason if refusal is not None and (network.egress.entries or local) else None
                reply = self._refuse(incoming, network, kept_in)
        except Exception as exc:  # fail closed, saying why; the proxy serves on
            logger.exception("llmproxy could not answer %s", self.describe(incoming))
            reply = text_reply(500, f"llmproxy could not answer: {exc}\n", ReplySource.ERROR)
            with contextlib.suppress(Exception):  # the stages that passed it on learn it failed, if they can
                self._answered_after(incoming, ReplySource.ERROR)
        for tap in self._reply_taps:
            try:
                reply = tap.reply(incoming, reply)
            except Exception:  # observing fails open: the reply as it was before this tap
                self.failed(tap, incoming)
        return reply

    def observe(self, incoming: Incoming, head: ResponseHead | None) -> "Observers | None":
        """The observers of the upstream's answer to `incoming` (None: it passes untouched); `head` None when the
        upstream failed before answering."""
        if not self._live_taps:
            return None
        watching = []
        for tap in self._live_taps:
            try:
                observer = tap.open(incoming, head)
            except Exception:
                self.failed(tap, incoming)
                continue
            if observer is not None:
                watching.append((tap, observer))
        return Observers(self, incoming, watching) if watching else None

    def failed(self, part: Stage | Tap, incoming: Incoming) -> None:
        """What `part` raised on `incoming`, logged with its traceback: a bug of llmproxy's, not the traffic's."""
        logger.exception("the %s %s failed on %s", part.name, _kind(part), self.describe(incoming))

    def ended(self, incoming: Incoming) -> None:
        """The door: the upstream's answer to `incoming`, a request `answer` sent upstream, has ended or failed."""
        with self._lock:
            self._upstream.discard(incoming)
            if not self._upstream:
                self._upstream_done.notify_all()

    def wait_for_upstream(self, timeout: float) -> list[str]:
        """Wait until every request sent upstream has its answer ended, `timeout` seconds at most (the pytest
        plugin, before it judges a test's recording: a client that timed out has stopped waiting, the proxy not
        yet); the requests still waiting then, described."""
        with self._lock:
            self._upstream_done.wait_for(lambda: not self._upstream, timeout)
            waiting = list(self._upstream)
        return [self.describe(incoming) for incoming in waiting]

    def describe(self, incoming: Incoming) -> str:
        """The request in a line, redacted: "POST https://api.anthropic.com/v1/messages"."""
        return request_line(incoming.raw, self.redactor)

    def explain(self) -> str:
        """The chain as built, slot by slot, for the debug log."""
        stages = {stage.name: _explained(stage) for stage in self.stages}
        taps = {tap.name: _explained(tap) for tap in self.taps}
        return layout(stages, self.network, taps)

    def close(self) -> None:
        """End of the run: every stage and tap closed, in order, whatever the others raised. Raises the first
        LlmproxyError (a cassette that could not be written) once all are closed; anything else a step raises
        is a bug, logged with its traceback."""
        failures: list[LlmproxyError] = []
        for part in self._parts():
            try:
                part.close()
            except LlmproxyError as failure:
                failures.append(failure)
            except Exception:
                logger.exception("the %s %s failed to close", part.name, _kind(part))
        if failures:
            raise failures[0]

    def summary(self) -> list[str]:
        """What the run did, once it is over: each stage's and tap's summary lines, in order."""
        return [line for part in self._parts() if isinstance(part, Summarises) for line in part.summary()]

    def _parts(self) -> list[Stage | Tap]:
        return [*self.stages, *self.taps]

    @staticmethod
    def _answered_after(incoming: Incoming, source: ReplySource) -> None:
        """The stages that passed `incoming` on learn what answered it instead."""
        for decline in incoming.declines:
            if decline.on_answered is not None:
                decline.on_answered(source)

    def _refuse(self, incoming: Incoming, network: Network, kept_in: str | None) -> Reply:
        """What nothing may answer gets every stage's reason (and why `--allow-host` kept it in) in its API's
        invalid-request error; anything else a plain JSON "not found" (`llmproxy.chain.misses`)."""
        reasons = [decline.reason for decline in incoming.declines]
        message = f"{self.describe(incoming)}: " + ("\nand ".join(reasons) or "nothing here answers it")
        if kept_in is not None:
            message += f"\n  not let out (--allow-host): {kept_in}"
        for decline in incoming.declines:
            if decline.on_refusal is not None:
                decline.on_refusal()
        with self._lock:
            self.refusals += 1
        logger.error("refused: %s", message)
        request_id = _jsonrpc_request_id(incoming)
        if request_id is not None:
            miss = jsonrpc_miss_reply(request_id, message)
        else:
            miss = miss_reply(incoming.route, message, network.miss_status)
        return Reply(miss.status, miss.headers, miss.body, source=ReplySource.MISS)


class Observers:
    """The taps watching one upstream answer, in the chain's order; each called as the chain calls every step:
    what one raises is logged and the answer goes on without its part (observing fails open)."""

    __slots__ = ("_chain", "_incoming", "_watching")

    def __init__(self, chain: Chain, incoming: Incoming, watching: list[tuple[Tap, Observer]]) -> None:
        self._chain = chain
        self._incoming = incoming
        self._watching = watching

    def chunk(self, data: bytes, at: float) -> bytes:
        """A piece of a streamed body through every observer in turn; what goes on to the client. Raises
        `CutStream` once every observer has seen the piece, when one cut the stream: those after it see what it
        kept, and what the last kept goes to the client."""
        cut = False
        for tap, observer in self._watching:
            try:
                data = observer.chunk(data, at)
            except CutStream as stop:
                cut, data = True, stop.keep
            except Exception:  # the piece goes on as it was
                self._chain.failed(tap, self._incoming)
        if cut:
            raise CutStream(data)
        return data

    async def end(self, exchange: RawExchange) -> None:
        """The exchange's end, shown to every observer in turn; returns once the last is done with it."""
        for tap, observer in self._watching:
            try:
                await observer.end(exchange)
            except Exception:
                self._chain.failed(tap, self._incoming)


def _kind(part: Stage | Tap) -> str:
    return "stage" if isinstance(part, Stage) else "tap"


def _explained(part: Stage | Tap) -> str:
    return (part.explain() if isinstance(part, Explains) else "") or type(part).__name__


def _ordered[T: (Stage, Tap)](parts: Sequence[T], order: tuple[str, ...], kind: str) -> list[T]:
    slots = {part.name for part in parts}
    unknown = slots - set(order)
    if unknown or len(slots) != len(parts):
        raise ValueError(f"each {kind} needs a slot of its own among {', '.join(order)}: got {sorted(unknown)}")
    return sorted(parts, key=lambda part: order.index(part.name))


def layout(stages: Mapping[str, str], network: Network, taps: Mapping[str, str]) -> str:
    """A chain slot by slot, in the declared order, each slot with what fills it (`--explain-chain`)."""
    lines = ["request side, in order:"]
    lines += [f"  {name}: {stages.get(name, '(empty)')}" for name in REQUEST_SIDE]
    lines += [f"  {network.explain()}", "response side, in order:"]
    lines += [f"  {name}: {taps.get(name, '(empty)')}" for name in RESPONSE_SIDE]
    return "\n".join(lines)


def _jsonrpc_request_id(incoming: Incoming) -> str | int | None:
    """The id of an MCP or A2A JSON-RPC request (not a notification), which a miss answers in JSON-RPC."""
    message = incoming.json
    if not isinstance(message, dict) or protocol(incoming.method, incoming.path, incoming.headers, message) is None:
        return None
    request_id = message.get("id")
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None
