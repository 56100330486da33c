"""The answer chain: the one place a request's path is decided, whichever door it came through.

The order is declared here, once. On the request side each stage in turn may answer; if none does, the
request goes upstream when the plan opens the network to it and the door can forward it, and is refused
otherwise — with the reasons every stage gave. On the response side, taps see what answers: a stage's reply
whole, or the upstream's answer as it arrives.

    request side:  intercept → mock → replay → background → (upstream, or refused)
    response side: intercept → record → meter

A slot with no stage in it costs nothing; `explain()` prints the chain a plan built (`--explain-chain`).
"""

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from llmproxy.cassette.convert import url
from llmproxy.cassette.redact import Redactor
from llmproxy.chain.incoming import Incoming
from llmproxy.chain.misses import miss_reply
from llmproxy.chain.reply import Reply, Source, text_reply
from llmproxy.chain.stage import Context, Observer, ResponseHead, Stage, Tap
from llmproxy.chain.state import State
from llmproxy.egress import EgressPolicy, Refused
from llmproxy.errors import LlmproxyError
from llmproxy.providers.registry import websocket_codec

logger = logging.getLogger(__name__)

REQUEST_SIDE: Final = ("intercept", "mock", "replay", "background")
"""Request-side slots, in order: faults and quotas before anything answers, expectations before recordings,
and what the coding CLIs send beside their model calls answered last, only when nothing else does."""
RESPONSE_SIDE: Final = ("intercept", "record", "meter")
"""Response-side slots, in order: what a fault changes is what the client gets, so it is what is recorded."""


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
            upstream.host, upstream.port, upstream.asserted, llm_api=incoming.route is not None
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
REDACTOR: Final = Redactor()


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
        self._network = State(network)
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
        return self._network.value

    def use_network(self, network: Network) -> Network:
        """Open or close the network from the next request on (the pytest plugin, between a test that
        records and one that replays); the network it replaces."""
        return self._network.swap(network)

    @property
    def answers(self) -> bool:
        """Whether anything but the upstream can answer (a chain that only records does not)."""
        return bool(self.stages) or not self.network.everything

    def serves_websocket(self, incoming: Incoming) -> bool:
        """Whether a WebSocket upgrade is answered here, each request message on it an `Incoming` of its own
        (`Door.WEBSOCKET`) — the API is one llmproxy reads message by message, something but the upstream
        answers, and the network does not take it — rather than going to the network whole: a WebSocket cannot
        be half answered here, half forwarded."""
        route = incoming.route
        return (
            route is not None
            and route.websocket
            and bool(self.stages)
            and websocket_codec(route) is not None
            and self.network.refusal(incoming) is not None
        )

    def answer(self, incoming: Incoming, context: Context) -> Reply | None:
        """The reply to `incoming`, or None: send it upstream (and `observe` the answer)."""
        network = self.network
        try:
            for stage in self.stages:
                reply = stage.decide(incoming, context)
                if reply is not None:
                    break
            else:
                refusal = network.refusal(incoming) if context.forwards else None
                if context.forwards and refusal is None:
                    with self._lock:
                        self._upstream.add(incoming)
                    return None
                kept_in = refusal.reason if refusal is not None and network.egress.entries else None
                reply = self._refuse(incoming, network, kept_in)
        except Exception as exc:  # fail closed, saying why; the proxy serves on
            logger.exception("llmproxy could not answer %s", self.describe(incoming))
            reply = text_reply(500, f"llmproxy could not answer: {exc}\n", Source.ERROR)
        for tap in self._reply_taps:
            try:
                reply = tap.reply(incoming, reply)
            except Exception:  # observing fails open
                logger.exception("the %s tap failed on %s", tap.name, self.describe(incoming))
        return reply

    def observe(self, incoming: Incoming, head: ResponseHead | None) -> list[Observer]:
        """Observers of the upstream's answer to `incoming` (none: it passes untouched); `head` None when the
        upstream failed before answering."""
        observers = []
        for tap in self._live_taps:
            try:
                observer = tap.open(incoming, head)
            except Exception:
                logger.exception("the %s tap failed on %s", tap.name, self.describe(incoming))
                continue
            if observer is not None:
                observers.append(observer)
        return observers

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
        return f"{incoming.raw.method} {url(incoming.raw, self.redactor)}"

    def explain(self) -> str:
        """The chain as built, slot by slot, for the debug log."""
        stages = {stage.name: stage.explain() or type(stage).__name__ for stage in self.stages}
        taps = {tap.name: tap.explain() or type(tap).__name__ for tap in self.taps}
        return layout(stages, self.network, taps)

    def start(self) -> None:
        """The run has started cleanly (the proxy listens, the command runs): parts that wait for it act now
        (a rewrite replaces its cassette)."""
        for part in self._parts():
            part.start()

    def close(self, failures: list[LlmproxyError]) -> list[str]:
        """End of the run: each stage's and tap's summary lines, in order. Every part is closed; what failed in
        closing (a cassette that could not be written) is added to `failures`."""
        return [line for part in self._parts() for line in part.close(failures)]

    def _parts(self) -> list[Stage | Tap]:
        return [*self.stages, *self.taps]

    def _refuse(self, incoming: Incoming, network: Network, kept_in: str | None) -> Reply:
        """What nothing may answer gets every stage's reason (and why `--allow-host` kept it in) in its API's
        invalid-request error; anything else a plain JSON "not found" (`llmproxy.chain.misses`)."""
        reasons = [decline.reason for decline in incoming.declines]
        message = f"{self.describe(incoming)}: " + ("\nand ".join(reasons) or "nothing here answers it")
        if kept_in is not None:
            message += f"\n  not let out (--allow-host): {kept_in}"
        for decline in incoming.declines:
            for stage in self.stages:
                if stage.name == decline.stage:
                    stage.refused(decline)
        with self._lock:
            self.refusals += 1
        logger.error("refused: %s", message)
        miss = miss_reply(incoming.route, message, network.miss_status)
        return Reply(miss.status, miss.headers, miss.body, source=Source.MISS)


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
