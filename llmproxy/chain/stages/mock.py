"""The mock stage (`llmproxy mock`): the engine picks the expectation that answers, the answer is encoded in
the requesting API's format. What no expectation answers — or what an expectation's answer cannot be given
to (a chat answer to `GET /v1/models`) — is passed on with the engine's reasons, to a cassette behind or to be
refused."""

import logging
import threading
from typing import TYPE_CHECKING

from llmproxy.chain.incoming import AttachedChaos, Incoming
from llmproxy.chain.reply import Reply
from llmproxy.chain.stage import Context, Stage
from llmproxy.chain.state import State
from llmproxy.mock.log import MockLog

if TYPE_CHECKING:  # a stage with no expectations (record's, replay's) does not import the engine or its models
    from llmproxy.intercept.engine import Intercept
    from llmproxy.mock.engine import MockEngine

logger = logging.getLogger(__name__)


class MockStage(Stage):
    name = "mock"

    def __init__(
        self, engine: "MockEngine | None", log: MockLog, source: str = "", chaos: "State[Intercept] | None" = None
    ) -> None:
        """`engine` None: the stage passes everything on, saying nothing, until `use` gives it expectations.
        `chaos`: the intercept stage's state, whose faults answer some requests before the mock sees them."""
        self.state: State[tuple[MockEngine | None, MockLog]] = State((engine, log))  # swapped whole while running
        self.source = source  # where the expectations came from, for explain()
        self.chaos = chaos
        self._lock = threading.Lock()

    @property
    def log(self) -> MockLog:
        """The request log of the expectations in use."""
        return self.state.value[1]

    def use(self, engine: "MockEngine | None", log: MockLog, source: str = "") -> MockLog:
        """Answer from `engine` (None: from nothing), logging to `log`, from the next request on (a pytest test's
        expectations); the log it replaces."""
        self.source = source
        return self.state.swap((engine, log))[1]

    def expecting(self) -> "MockEngine":
        """The engine in use; an empty one put in place first when there is none, so that expectations can be
        added to a run that started with none (the control API, in record and replay too)."""
        with self._lock:
            engine, log = self.state.value
            if engine is None:
                from llmproxy.mock.engine import MockEngine
                from llmproxy.mock.spec import ExpectationsFile

                engine = MockEngine(ExpectationsFile(expectations=()))
                self.state.swap((engine, log))
            return engine

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        engine, log = self.state.value
        if engine is None:
            return None
        outcome = engine.answer(incoming)
        if not isinstance(outcome, tuple):  # a miss: logged once the chain knows whether anything after it answers
            incoming.decline(
                self.name,
                outcome.explain(),
                on_refusal=lambda: log.missed(incoming, outcome),
                on_answered=lambda source: log.passed_on(incoming, source),
            )
            return None
        decision, reply = outcome
        if decision.chaos is not None:  # decided by the intercept tap, now that the answer is known
            incoming.chaos = AttachedChaos(decision.source, decision.chaos, decision.take_back)
        log.answered(incoming, decision, reply)
        for note in reply.notes:
            logger.info("%s: %s", decision.source, note)
        for warning in reply.warnings:
            logger.warning("%s: %s", decision.source, warning)
        return reply

    def explain(self) -> str:
        return f"expectations {self.source}" if self.source else "no expectations"

    def close(self) -> None:
        """Raises LlmproxyError when the request log could not be written whole."""
        engine, log = self.state.value
        if engine is not None:
            log.close()

    def summary(self) -> list[str]:
        engine, log = self.state.value
        if engine is None:
            return []
        return [log.summary(self.chaos.value.stood_in if self.chaos is not None else 0)]
