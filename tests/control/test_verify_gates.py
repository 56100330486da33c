"""The gates of `llmproxy verify` run over a real running mock's journal: the official OpenAI SDK makes the
calls, the typed `Client` verifies a tool was called, structured output, a cost budget — each scoped by test id
or source, and each failure answering with what was found instead."""

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import openai
import pytest

from llmproxy.control.client import Client, ControlError
from llmproxy.session import Session
from tests.control.test_api import call
from tests.mock.sdk_clients import openai_client, serving

USAGE = {"inputTokens": 1000, "outputTokens": 500}
EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {
            "match": {"latestMessageContains": "weather"},
            "respond": {
                "toolCalls": [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}],
                "usage": USAGE,
            },
        },
        {
            "match": {"latestMessageContains": "person"},
            "respond": {"text": '{"name": "Ada", "age": 36}', "usage": USAGE},
        },
        {"match": {"latestMessageContains": "broken"}, "respond": {"text": '{"name": 7}', "usage": USAGE}},
    ]
}
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    for session in serving(tmp_path_factory, EXPECTATIONS):
        with openai_client(session) as client:
            for text, test in (("The weather in Paris?", "agent"), ("A person, as JSON", "json"), ("broken", "bad")):
                asked = [{"role": "user", "content": text}]
                client.chat.completions.create(
                    model="gpt-4o-mini", messages=asked, extra_headers={"x-llmproxy-test-id": test}
                )
            with pytest.raises(openai.BadRequestError):  # missed: never judged by a gate unless asked for
                client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Hello?"}])
        yield session


@pytest.fixture
def control(proxy: Session) -> Client:
    return Client.from_environment(proxy.environment)


def test_a_tool_called_by_name_and_arguments(control: Client) -> None:
    verified = control.verify_tool_call("get_weather", arguments={"city": "Paris"}, exactly=1)
    assert (verified.ok, verified.outcome, verified.calls) == (True, "pass", [1, 2, 3])
    assert verified.details["matches"] == [
        {"call": 1, "id": verified.details["matches"][0]["id"], "arguments": '{"city":"Paris","unit":"celsius"}'}
    ]
    assert control.verify_tool_call("get_weather", args_regex=r'"unit":"cel', test_id="agent").ok
    assert not control.verify_tool_call("get_weather", test_id="json").ok  # scoped: that test called no tool


def test_a_tool_not_called_so_says_which_were(control: Client) -> None:
    verified = control.verify_tool_call("get_weather", arguments={"city": "London"})
    assert (verified.ok, verified.outcome, verified.tools_called) == (False, "fail", {"get_weather": 1})
    assert verified.reasons == [
        'get_weather with arguments holding {"city":"London"} was called 0 times, fewer than --at-least 1'
    ]
    too_often = control.verify_tool_call("get_weather", at_most=0)
    assert (too_often.ok, too_often.details["count"]) == (False, 1)


def test_structured_output_against_a_json_schema(control: Client) -> None:
    assert control.verify_structured_output(PERSON, test_id="json").ok
    verified = control.verify_structured_output(PERSON)
    assert (verified.ok, verified.calls) == (False, [1, 2, 3])
    assert verified.reasons == ["call 3: $.name: 7 is not of type 'string'"]
    assert (verified.details["checked"], verified.details["conforming"], verified.details["skippedNoOutput"]) == (
        2,
        1,
        1,
    )
    invalid = control.verify_structured_output({"type": "no-such-type"})
    assert (invalid.ok, invalid.outcome) == (False, "could_not_check")
    assert invalid.reasons[0].startswith("the schema is not valid: ")


def test_cost_within_a_budget_priced_as_the_report_prices(control: Client) -> None:
    verified = control.verify_cost(Decimal("1.00"))
    total = Decimal(verified.details["totalCostUsd"])
    assert (verified.ok, verified.details["checked"], verified.details["unpriced"]) == (True, 3, 0)
    assert 0 < total < Decimal("0.01")  # 3 calls of gpt-4o-mini, 1000 in and 500 out each
    over = control.verify_cost(total / 2)
    assert (over.ok, over.outcome) == (False, "fail")
    assert over.reasons[0].startswith("estimated cost $")
    assert "is above --max-usd" in over.reasons[0]
    one = control.verify_cost("1", test_id="agent")
    assert one.calls == [1]
    assert Decimal(one.details["totalCostUsd"]) * 3 == total


def test_nothing_to_judge_could_not_check(control: Client) -> None:
    verified = control.verify_cost("1", test_id="no-such-test")
    assert (verified.ok, verified.outcome, verified.reasons) == (
        False,
        "could_not_check",
        ["no chat calls were recorded"],
    )
    missed = control.verify_tool_call("get_weather", source="missed")  # asked for: the miss is read, and not answered
    assert (missed.calls, missed.outcome) == ([4], "could_not_check")


@pytest.mark.parametrize(
    ("path", "body", "said"),
    [
        ("/verify/tool-call", {"name": "x", "argsRegex": "("}, "$.argsRegex: not a regular expression"),
        ("/verify/tool-call", {"name": ""}, "$.name: String should have at least 1 character"),
        ("/verify/tool-call", {"name": "x", "exactly": 1, "atMost": 2}, "$: give exactly, or atLeast and/or atMost"),
        ("/verify/cost", {"maxUsd": "lots"}, "$.maxUsd: Input should be a valid decimal"),
        ("/verify/cost", {"maxUsd": -1}, "$.maxUsd: Input should be greater than or equal to 0"),
        ("/verify/structured-output", {}, "$.schema: Field required"),
    ],
)
def test_a_bad_verify_gets_400_naming_the_json_path(proxy: Session, path: str, body: Any, said: str) -> None:
    status, answer, _ = call(proxy, "POST", path, body, token="read-only")  # a verify only reads
    assert status == 400
    assert answer["error"].startswith(said), answer["error"]


def test_the_client_checks_what_it_sends_as_the_api_would(control: Client) -> None:
    with pytest.raises(ControlError, match=r"^\$\.argsRegex: not a regular expression") as error:
        control.verify_tool_call("x", args_regex="(")
    assert error.value.status == 400
