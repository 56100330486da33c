"""The mock stage (`llmproxy mock`): the engine picks the expectation that answers, the answer is encoded in
the requesting API's format. What no expectation answers — or what an expectation's answer cannot be given
to (a chat answer to `GET /v1/models`) — is passed on with the engine's reasons, to a cassette behind or to be
refused."""

import logging

from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply
from llmproxy.chain.stage import Context, Stage
from llmproxy.chain.state import State
from llmproxy.errors import LlmproxyError
from llmproxy.mock.engine import MockEngine, MockMiss
from llmproxy.mock.log import MockLog

logger = logging.getLogger(__name__)


class MockStage(Stage):
    name = "mock"

    def __init__(self, engine: MockEngine, log: MockLog, source: str = "") -> None:
        self.state = State(engine)  # swap in other expectations while running
        self.log = log
        self.source = source  # where the expectations came from, for explain()

    def decide(self, incoming: Incoming, context: Context) -> Reply | None:
        outcome = self.state.value.answer(incoming)
        if isinstance(outcome, MockMiss):
            self.log.missed(incoming, outcome)
            incoming.decline(self.name, outcome.explain(), outcome)
            return None
        decision, reply = outcome
        self.log.answered(incoming, decision, reply)
        for note in reply.notes:
            logger.info("%s: %s", decision.source, note)
        for warning in reply.warnings:
            logger.warning("%s: %s", decision.source, warning)
        return reply

    def explain(self) -> str:
        return f"expectations {self.source}".rstrip()

    def close(self, failures: list[LlmproxyError]) -> list[str]:
        summary = self.log.summary()
        try:
            self.log.close()
        except LlmproxyError as error:  # the request log could not be written whole
            failures.append(error)
        return [summary]
