"""What the `llmproxy` fixture gives a test: the running proxy as this test sees it — where it listens, the
environment its clients need, and everything its requests met so far: the request log, misses, unused
recordings, the tokens, cost and tool calls the answers carried (`llmproxy.meter`), and the faults its
chaos injected."""

from decimal import Decimal
from pathlib import Path
from typing import Any

from llmproxy.intercept.aftermath import Outcome
from llmproxy.meter import Call, Tokens, totals
from llmproxy.model import ToolCall
from llmproxy.plan import RecordMode
from llmproxy.testing.worker import Turn


class TestProxy:
    """The `llmproxy` fixture. Numbers are live: read them after the requests you mean to count."""

    __test__ = False  # not a test class, whatever its name says

    def __init__(self, turn: Turn) -> None:
        self._turn = turn

    @property
    def url(self) -> str:
        """The forward proxy, for `HTTPS_PROXY` (already set in `os.environ` for the test's duration)."""
        return self._turn.proxy.session.url

    @property
    def environment(self) -> dict[str, str]:
        """Every proxy and CA variable a client or a subprocess needs (already in `os.environ` for the test)."""
        return dict(self._turn.proxy.environment)

    @property
    def cassette(self) -> Path:
        return self._turn.settings.cassette

    @property
    def mode(self) -> RecordMode:
        """The record mode this test runs in (`once` resolved: `none` when the cassette exists, else `all`)."""
        return self._turn.mode

    @property
    def calls(self) -> list[Call]:
        """The request log: each request this test made, in the order answered, with who answered it (`hit`,
        `mock`, `upstream`, `miss`), its status, model, tokens, cost and timing."""
        return self._turn.meter.calls

    @property
    def mock_log(self) -> list[dict[str, Any]]:
        """The mock's request log (`llmproxy mock --log`'s entries), when the test has expectations."""
        return self._turn.log.entries if self._turn.log is not None else []

    @property
    def misses(self) -> list[str]:
        """Each request nothing answered, with its diagnostic (the test fails for it when it ends)."""
        return self._turn.misses()

    @property
    def unused(self) -> list[str]:
        """Recorded exchanges of the test's cassette it has not asked for (yet)."""
        return self._turn.unused()

    @property
    def tokens(self) -> Tokens:
        return totals(self.calls).tokens

    @property
    def cost_usd(self) -> Decimal:
        """What the answers so far cost, priced by model and date; raises when one could not be priced, rather
        than counting it as $0."""
        summed = totals(self.calls)
        if summed.unpriced:
            call = summed.unpriced[0]
            raise ValueError(f"cannot price call #{call.seq} ({call.model or call.url}): {call.unpriced}")
        return summed.cost_usd

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls the model asked for, in order, across the test's answers."""
        return [tool_call for call in self.calls for tool_call in call.tool_calls]

    @property
    def injected(self) -> list[Outcome]:
        """The faults the marker's `chaos` put into this test's answers, in order, each with what the client did
        next: `.fault` (kind, status, retry_after, the rule), `.next` (retried, carried_on, gave_up, answered),
        `.retry_after` (seconds until the retry) and `.recovered` (a successful answer came after it)."""
        return self._turn.intercept.aftermath.outcomes
