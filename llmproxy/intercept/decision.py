"""What the intercept decides for one request (the decision seam, docs/architecture.md#seams): refuse it with
an error, drop the connection, answer it with a misbehaving model, or let it be answered — shaped on the way,
with the rate-limit state to advertise and the token quotas to charge. Only the chain's stage and tap apply
these.

A refusal is encoded here, pure: the body by the requesting API's own error encoder (what its SDK parses),
the status as the profile asked, `retry-after` as given (seconds or a date), and the provider's full
rate-limit header family.
"""

from dataclasses import dataclass
from datetime import datetime
from typing import Final

import orjson

from llmproxy.intercept.aftermath import Attempt
from llmproxy.intercept.faults import Injected
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.retry_after import RetryAfter
from llmproxy.intercept.shaping import Shaping
from llmproxy.model import Completion, ErrorKind, Route
from llmproxy.providers.base import RateLimits
from llmproxy.providers.registry import error_encoder, rate_limit_encoder

type Headers = tuple[tuple[str, str], ...]

_RETRY_HEADERS: Final = frozenset({"retry-after", "retry-after-ms"})


@dataclass(frozen=True, slots=True)
class Refusal:
    """An error instead of an answer. `final`: retrying cannot help (a spent budget): `x-should-retry: false`
    tells the Stainless SDKs (Anthropic, OpenAI) not to."""

    fault: Injected
    status: int
    kind: ErrorKind
    message: str
    retry: RetryAfter | None = None
    limits: RateLimits | None = None
    final: bool = False

    def response(self, route: Route | None, now: datetime) -> tuple[int, Headers, bytes]:
        """Status, headers and body, in the shape of the API `route` speaks (plain JSON for anything else)."""
        seconds = self.retry.seconds if self.retry is not None else None
        if route is None:
            body = orjson.dumps({"error": {"type": self.fault.kind.value, "message": self.message}})
            headers = {"content-type": "application/json"}
        else:
            encoded = error_encoder(route)(self.kind, self.message, retry_after=seconds)
            headers = {name: value for name, value in encoded.headers.items() if name not in _RETRY_HEADERS}
            body = encoded.body
            if self.limits is not None:
                headers.update(rate_limit_encoder(route)(self.limits, now))
        if self.retry is not None:
            headers.update(self.retry.headers())
        if self.final:
            headers["x-should-retry"] = "false"
        return self.status, tuple(headers.items()), body


@dataclass(frozen=True, slots=True)
class Dropped:
    """The connection closes without an answer."""

    fault: Injected


@dataclass(frozen=True, slots=True)
class Misbehaved:
    """A well-formed wrong answer, which llmproxy gives itself."""

    fault: Injected
    completion: Completion


@dataclass(frozen=True, slots=True)
class Charge:
    """A token quota an answer's usage goes to."""

    profile: ChaosProfile
    name: str


@dataclass(frozen=True, slots=True)
class Through:
    """Let the request be answered (by a mock, a cassette or the upstream). `shaping` changes the answer on
    its way, in the name of `shaped_by`; `limits` is the rate-limit state to put on a success; `charges` the
    token quotas its usage counts against; `spend`: its cost counts against the budget."""

    shaping: Shaping | None = None
    shaped_by: str = ""
    limits: RateLimits | None = None
    charges: tuple[Charge, ...] = ()
    spend: bool = False

    @property
    def idle(self) -> bool:
        """Nothing to do for this answer."""
        return self.shaping is None and self.limits is None and not self.charges and not self.spend

    def limit_headers(self, route: Route | None, now: datetime) -> Headers:
        if self.limits is None or route is None:
            return ()
        return tuple(rate_limit_encoder(route)(self.limits, now).items())


PASS: Final = Through()  # nothing to do for this answer
SPEND: Final = Through(spend=True)  # only its cost, to the budget


type Decision = Refusal | Dropped | Misbehaved | Through


@dataclass(slots=True)
class Pending:
    """A request let through, waiting for its answer: what to do to it, and the attempt it is (whose answer the
    aftermath learns: whether a fault was recovered from is what the client got). The intercept stage leaves it
    on the request (`Incoming.intercepted`) for the intercept tap."""

    through: Through
    attempt: Attempt | None
