"""What telemetry makes of one recorded reply served to one request (`Served`), kept with the reply: a recording
replayed again and again is the same call every time but for its time, its number and its trace, so its facts,
its registry shape and its span's encoded tail are made the first time and only looked up after."""

from decimal import Decimal

from llmproxy.chain.reply import Reply
from llmproxy.telemetry.conventions import Facts
from llmproxy.telemetry.metrics import Shape
from llmproxy.telemetry.wire import Untimed


class Served:
    """`request`: all the telemetry reads of the request the reply answered (its body, where it went, the API,
    the faults…): a request that differs in any of these is served afresh. `facts`: the request's facts but
    its trace (each request's own). `shape`: the call's in the registry, for the price `cost` / `unpriced` (a
    price may change with the time of day). `span`: the span's encoded tail — its name, kind, attributes and
    status — for the price it was made with; the export thread's alone."""

    __slots__ = ("cost", "facts", "reply", "request", "shape", "span", "unpriced")

    def __init__(self, reply: Reply, request: tuple[object, ...], facts: Facts) -> None:
        self.reply = reply  # held: its id, the key it is kept by, stays its own
        self.request = request
        self.facts = facts
        self.shape: Shape | None = None
        self.cost: Decimal | None = None
        self.unpriced: str | None = None
        self.span: tuple[Decimal | None, str | None, Untimed] | None = None
