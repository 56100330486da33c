"""The intercept's decisions, as the rules read: quotas, windows, seeded errors, the budget, model faults,
where profiles come from. Plain requests, a clock the test moves, counters in memory."""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import orjson
import pytest

from llmproxy.intercept.decision import Dropped, Misbehaved, Refusal, Through
from llmproxy.intercept.engine import Intercept
from llmproxy.intercept.faults import FaultKind
from llmproxy.intercept.model_faults import INVALID_ARGUMENTS, UNKNOWN_TOOL
from llmproxy.intercept.profile import ChaosProfile, ModelFault
from llmproxy.intercept.rules import ChaosFile, Rule, RuleMatch
from llmproxy.model import StopReason, Usage
from tests.intercept.requests import Clock, Request, openai


def engine(*profiles: dict[str, Any], seed: int = 7, clock: Clock | None = None, **file: Any) -> Intercept:
    rules = tuple(Rule(chaos=ChaosProfile.model_validate(profile)) for profile in profiles)
    return Intercept(ChaosFile(seed=seed, rules=rules, **file), clock=clock or Clock())


def statuses(intercept: Intercept, count: int, request: Request | None = None) -> list[int]:
    decisions = [intercept.decide(request or Request()) for _ in range(count)]
    return [decision.status if isinstance(decision, Refusal) else 200 for decision in decisions]


def response(
    decision: Any, request: Request | None = None, now: float = 1_767_225_600.0
) -> tuple[int, dict[str, str], Any]:
    assert isinstance(decision, Refusal), decision
    status, headers, body = decision.response((request or Request()).route, datetime.fromtimestamp(now, UTC))
    return status, dict(headers), orjson.loads(body)


def test_nothing_configured_is_inactive_and_lets_everything_through() -> None:
    intercept = Intercept()
    assert not intercept.active
    decision = intercept.decide(Request())
    assert isinstance(decision, Through)
    assert decision.idle


def test_a_request_quota_refuses_the_request_over_its_limit_with_anthropics_headers() -> None:
    clock = Clock()
    intercept = engine({"quotaName": "acct", "quotaLimit": 2, "quotaWindowMillis": 60_000}, clock=clock)
    first = intercept.decide(Request())
    assert isinstance(first, Through)
    assert first.limits is not None
    assert (first.limits.requests_limit, first.limits.requests_remaining) == (2, 1)
    clock.now += 10
    intercept.decide(Request())
    status, headers, body = response(intercept.decide(Request()), now=clock.now)
    assert status == 429
    assert body["error"]["type"] == "rate_limit_error"
    assert headers["anthropic-ratelimit-requests-limit"] == "2"
    assert headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert headers["anthropic-ratelimit-requests-reset"] == "2026-01-01T00:01:00Z"  # the window's end
    assert headers["retry-after"] == "50"  # the same instant, in seconds
    clock.now += 50
    assert statuses(intercept, 2) == [200, 200]
    assert intercept.injected == {FaultKind.QUOTA: 1}


def test_profiles_with_one_quota_name_share_one_counter() -> None:
    quota = {"quotaName": "account", "quotaLimit": 3, "quotaWindowMillis": 60_000}
    intercept = Intercept(
        ChaosFile(
            rules=(
                Rule(match=RuleMatch(provider="openai"), chaos=ChaosProfile.model_validate(quota)),
                Rule(match=RuleMatch(provider="anthropic"), chaos=ChaosProfile.model_validate(quota)),
            )
        ),
        clock=Clock(),
    )
    assert [*statuses(intercept, 2, openai()), *statuses(intercept, 2)] == [200, 200, 200, 429]


def test_a_token_quota_refuses_once_the_answers_have_spent_the_window() -> None:
    clock = Clock()
    intercept = engine({"quotaName": "tpm", "tokenQuotaLimit": 1000, "tokenQuotaWindowMillis": 60_000}, clock=clock)
    first = intercept.decide(Request())
    assert isinstance(first, Through)
    assert first.charges
    assert first.limits is not None
    assert first.limits.tokens_remaining == 1000
    intercept.settle(first, Usage(input_tokens=900, output_tokens=150), "claude-sonnet-4-5", Request().route, "", None)
    status, headers, body = response(intercept.decide(openai()), openai(), clock.now)
    assert status == 429
    assert body["error"]["code"] == "rate_limit_exceeded"
    assert headers["x-ratelimit-limit-tokens"] == "1000"
    assert headers["x-ratelimit-remaining-tokens"] == "0"
    assert headers["x-ratelimit-reset-tokens"] == "1m0s"
    assert intercept.injected == {FaultKind.TOKEN_QUOTA: 1}
    clock.now += 60
    assert statuses(intercept, 1) == [200]


def test_anthropic_input_and_output_token_limits_are_advertised_apart() -> None:
    intercept = engine(
        {"inputTokenQuotaLimit": 30_000, "outputTokenQuotaLimit": 8_000, "tokenQuotaWindowMillis": 60_000}
    )
    first = intercept.decide(Request())
    assert isinstance(first, Through)
    intercept.settle(first, Usage(input_tokens=1200, output_tokens=300), None, None, "", None)
    second = intercept.decide(Request())
    assert isinstance(second, Through)
    headers = dict(second.limit_headers(Request().route, datetime(2026, 1, 1, tzinfo=UTC)))
    assert headers["anthropic-ratelimit-input-tokens-limit"] == "30000"
    assert headers["anthropic-ratelimit-input-tokens-remaining"] == "28800"
    assert headers["anthropic-ratelimit-output-tokens-limit"] == "8000"
    assert headers["anthropic-ratelimit-output-tokens-remaining"] == "7700"
    assert headers["anthropic-ratelimit-tokens-remaining"] == "7700"  # the most restrictive of the two


def test_the_same_seed_gives_the_same_faults_and_another_seed_others() -> None:
    profile = {"errorStatus": 529, "errorProbability": 0.3}
    runs = [statuses(engine(profile, seed=seed), 200) for seed in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]
    assert 40 <= runs[0].count(529) <= 80  # about 30 %


def test_a_profiles_own_seed_wins_over_the_runs() -> None:
    profile = {"errorStatus": 500, "errorProbability": 0.5, "seed": 1}
    assert statuses(engine(profile, seed=2), 30) == statuses(engine(profile, seed=3), 30)


def test_succeed_first_and_fail_request_count_make_a_window() -> None:
    intercept = engine({"errorStatus": 503, "succeedFirst": 1, "failRequestCount": 2})
    assert statuses(intercept, 5) == [200, 503, 503, 200, 200]


def test_an_injected_error_has_the_providers_body_and_the_retry_after_given() -> None:
    intercept = engine({"errorStatus": 529, "retryAfter": 0.25})
    status, headers, body = response(intercept.decide(Request()))
    assert status == 529
    assert body["error"]["type"] == "overloaded_error"
    assert (headers["retry-after"], headers["retry-after-ms"]) == ("1", "250")
    status, headers, body = response(intercept.decide(openai()), openai())
    assert (status, body["error"]["type"]) == (529, "server_error")


def test_a_retry_after_given_as_an_http_date_is_sent_as_given() -> None:
    intercept = engine({"errorStatus": 503, "retryAfter": "Thu, 01 Jan 2026 00:00:30 GMT"})
    decision = intercept.decide(Request())
    assert isinstance(decision, Refusal)
    assert decision.fault.retry_after == 30
    _, headers, _ = response(decision)
    assert headers["retry-after"] == "Thu, 01 Jan 2026 00:00:30 GMT"
    assert "retry-after-ms" not in headers


def test_the_budget_refuses_llm_requests_once_spent_and_says_so() -> None:
    intercept = engine(budgetUsd=Decimal("0.02"))
    request = Request()
    for _ in range(2):
        through = intercept.decide(request)
        assert isinstance(through, Through)
        assert through.spend
        intercept.settle(
            through, Usage(input_tokens=1000, output_tokens=1000), "claude-sonnet-4-5", request.route, "", None
        )
    refusal = intercept.decide(request)
    status, headers, body = response(refusal)
    assert status == 429
    assert headers["x-should-retry"] == "false"  # retrying cannot help
    assert body["error"]["message"] == "llmproxy budget exhausted: $0.0360 spent of the $0.02 budget"
    assert isinstance(refusal, Refusal)
    assert refusal.fault.describe() == "budget: $0.0360 spent (budget $0.02)"  # the limit said once
    assert isinstance(intercept.decide(Request("example.com", "/health", {})), Through)  # not an LLM request


def test_unpriced_answers_are_counted_not_free() -> None:
    intercept = engine(budgetUsd=Decimal("1"))
    through = intercept.decide(Request())
    assert isinstance(through, Through)
    intercept.settle(
        through, Usage(input_tokens=10, output_tokens=10), "a-model-nobody-prices", Request().route, "", None
    )
    intercept.settle(through, None, "claude-sonnet-4-5", Request().route, "", None)
    assert intercept.budget is not None
    standing = intercept.budget.standing()
    assert (standing.spent, standing.unpriced) == (0, 2)
    assert standing.describe().endswith("; not in it: 2 calls that could not be priced")


@pytest.mark.parametrize(
    ("fault", "stop"),
    [
        (ModelFault.EMPTY, StopReason.END_TURN),
        (ModelFault.REFUSAL, StopReason.REFUSAL),
        (ModelFault.CONTENT_FILTER, StopReason.CONTENT_FILTER),
        (ModelFault.MAX_TOKENS, StopReason.MAX_TOKENS),
        (ModelFault.INVALID_TOOL_ARGUMENTS, StopReason.TOOL_USE),
        (ModelFault.UNKNOWN_TOOL, StopReason.TOOL_USE),
    ],
)
def test_model_faults_are_wrong_answers(fault: ModelFault, stop: StopReason) -> None:
    tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
    request = Request(
        json={
            "model": "claude-sonnet-4-5",
            "max_tokens": 64,
            "tools": tools,
            "messages": [{"role": "user", "content": "hi"}],
        }
    )
    decision = engine({"modelFault": fault.value}).decide(request)
    assert isinstance(decision, Misbehaved)
    completion = decision.completion
    assert completion.stop_reason is stop
    if fault is ModelFault.EMPTY:
        assert (completion.text, completion.tool_calls) == ("", ())
    if fault is ModelFault.INVALID_TOOL_ARGUMENTS:
        (call,) = completion.tool_calls
        assert (call.name, call.invalid_arguments) == ("Bash", INVALID_ARGUMENTS)
    if fault is ModelFault.UNKNOWN_TOOL:
        assert completion.tool_calls[0].name == UNKNOWN_TOOL


def test_a_connection_drop_comes_before_an_error() -> None:
    decision = engine({"connectionDrop": True, "errorStatus": 500}).decide(Request())
    assert isinstance(decision, Dropped)


def test_rules_without_a_match_leave_non_llm_traffic_alone() -> None:
    intercept = engine({"errorStatus": 500})
    assert statuses(intercept, 1, Request("api.anthropic.com", "/api/claude_code/settings", None)) == [200]
    named = Intercept(
        ChaosFile(rules=(Rule(match=RuleMatch(host="example.com"), chaos=ChaosProfile(errorStatus=503)),)),
        clock=Clock(),
    )
    assert statuses(named, 1, Request("example.com", "/health", None)) == [503]


def test_rules_select_by_provider_model_and_path() -> None:
    rule = Rule(
        match=RuleMatch(provider="openai", model="gpt-4o", path="^/v1/chat"), chaos=ChaosProfile(errorStatus=500)
    )
    intercept = Intercept(ChaosFile(rules=(rule,)), clock=Clock())
    assert statuses(intercept, 1, openai(model="gpt-4o")) == [500]
    assert statuses(intercept, 1, openai(model="gpt-4o-mini")) == [200]
    assert statuses(intercept, 1, Request()) == [200]


def test_a_hosts_profile_lasts_its_ttl() -> None:
    clock = Clock()
    intercept = Intercept(clock=clock)
    intercept.hosts.put("api.openai.com", ChaosProfile(errorStatus=503), ttl_ms=1500)
    assert intercept.active
    assert statuses(intercept, 1, openai()) == [503]
    assert statuses(intercept, 1, Request()) == [200]  # another host
    clock.now += 1.5
    assert statuses(intercept, 1, openai()) == [200]


def test_the_header_profile_comes_first() -> None:
    intercept = engine({"errorStatus": 500})
    decision = intercept.decide(Request(), override=ChaosProfile(errorStatus=429))
    assert isinstance(decision, Refusal)
    assert (decision.status, decision.fault.rule) == (429, "x-llmproxy-chaos")


def test_latency_jitter_is_drawn_from_the_seed() -> None:
    profile = {"latency": {"fixedMs": 100, "jitterMs": 50, "perEventMs": 10}}
    delays = []
    for _ in range(2):
        intercept = engine(profile)
        shapings = [intercept.decide(Request()) for _ in range(5)]
        delays.append(
            [decision.shaping.first_byte for decision in shapings if isinstance(decision, Through) and decision.shaping]
        )
    assert delays[0] == delays[1]
    assert all(0.1 <= delay <= 0.15 for delay in delays[0])
    assert len(set(delays[0])) > 1
