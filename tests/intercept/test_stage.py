"""The intercept stage's answers: an injected error that does not depend on the moment is encoded once per API
and served again (shared, like a recording); one that carries the moment's rate-limit state is encoded each
time."""

from llmproxy.chain import Context, Door, Incoming
from llmproxy.chain.reply import Reply, ReplySource
from llmproxy.chain.stages.intercept import InterceptStage
from llmproxy.intercept.engine import Intercept
from llmproxy.intercept.faults import FaultKind
from llmproxy.intercept.rules import ChaosFile, shorthand_rules
from tests.cassette import factory
from tests.intercept.requests import Clock, Request, openai

RELAY = Context(Door.RELAY, forwards=False)


def answer(stage: InterceptStage, request: Request) -> Reply:
    raw = factory.request(request.body, host=request.host, path=request.path, headers=())
    reply = stage.decide(Incoming(raw, Door.RELAY), RELAY)
    assert reply is not None
    assert reply.source is ReplySource.FAULT
    return reply


def test_an_injected_error_is_encoded_once_per_api_and_served_again() -> None:
    stage = InterceptStage(Intercept(ChaosFile(rules=shorthand_rules(fail="529")), clock=Clock()))
    first, again = answer(stage, Request()), answer(stage, Request())
    assert first is again
    assert first.shared
    assert first.status == 529
    assert b'"overloaded_error"' in first.data
    other = answer(stage, openai())
    assert other is not first
    assert b'"type":"server_error"' in other.data
    assert stage.engine.injected[FaultKind.ERROR] == 3


def test_an_error_with_rate_limit_state_is_encoded_for_each_request() -> None:
    stage = InterceptStage(Intercept(ChaosFile(rules=shorthand_rules(fail="529", rpm=100)), clock=Clock()))
    replies = [answer(stage, Request()) for _ in range(2)]
    assert [dict(reply.headers)["anthropic-ratelimit-requests-remaining"] for reply in replies] == ["99", "98"]
    assert not any(reply.shared for reply in replies)
