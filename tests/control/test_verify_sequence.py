"""Verifying the order requests arrived in, over a real running mock's journal: the official OpenAI SDK sends
three requests in turn, the typed `Client` verifies a sequence of `match` predicates (MockServer's verify
sequence), and a broken order says which step broke it, what came instead and what came too early."""

from collections.abc import Iterator
from typing import Any

import pytest

from llmproxy.control.client import Client
from llmproxy.session import Session
from tests.control.test_api import call
from tests.mock.sdk_clients import openai_client, serving

EXPECTATIONS: dict[str, Any] = {"expectations": [{"respond": {"text": "Done."}}]}
ASKED = ("Plan the trip", "What is the weather?", "Book the hotel")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    for session in serving(tmp_path_factory, EXPECTATIONS):
        with openai_client(session) as client:
            for text in ASKED:
                client.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=[{"role": "user", "content": text}],
                    extra_headers={"x-llmproxy-test-id": "trip"},
                )
        yield session


@pytest.fixture
def control(proxy: Session) -> Client:
    return Client.from_environment(proxy.environment)


def said(text: str) -> dict[str, str]:
    return {"latestMessageContains": text}


def test_requests_in_the_order_given_others_between(control: Client) -> None:
    verified = control.verify_sequence(said("Plan"), said("Book"))
    assert (verified.ok, verified.matched, verified.broken_step, verified.closest) == (True, [1, 3], None, [])
    assert control.verify_sequence(said("Plan"), said("weather"), said("Book"), test_id="trip").matched == [1, 2, 3]
    assert control.verify_sequence({}, {}, {}).ok  # any three requests


def test_a_step_that_came_too_early_is_named_with_where_it_came(control: Client) -> None:
    verified = control.verify_sequence(said("Book"), said("Plan"))
    assert (verified.ok, verified.matched, verified.broken_step, verified.earlier) == (False, [3], 2, [1])
    assert verified.reason == (
        'step 2 ({"latestMessageContains":"Plan"}): no request holds to it after step 1 (request 3); '
        "request 1 did, before it"
    )
    assert verified.closest == []  # nothing came after request 3


def test_a_step_that_never_came_says_what_came_instead(control: Client) -> None:
    verified = control.verify_sequence(said("Plan"), said("Pay"), said("Book"))
    assert (verified.ok, verified.matched, verified.broken_step, verified.earlier) == (False, [1], 2, [])
    assert verified.reason == (
        'step 2 ({"latestMessageContains":"Pay"}): no request holds to it after step 1 (request 1), nor before it'
    )
    assert [(near.seq, near.failed) for near in verified.closest] == [
        (2, ["latestMessageContains: 'Pay' not in 'What is the weather?'"]),
        (3, ["latestMessageContains: 'Pay' not in 'Book the hotel'"]),
    ]


def test_a_first_step_that_never_came(control: Client) -> None:
    verified = control.verify_sequence({"model": "gpt-4o"})
    assert (verified.ok, verified.matched, verified.broken_step) == (False, [], 1)
    assert verified.reason == 'step 1 ({"model":"gpt-4o"}): no request holds to it among 3'
    assert [near.seq for near in verified.closest] == [1, 2, 3]
    other = control.verify_sequence(said("Plan"), test_id="another-test")
    assert other.reason == 'step 1 ({"latestMessageContains":"Plan"}): no request holds to it: the journal has none'


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"sequence": []}, "$.sequence: List should have at least 1 item after validation, not 0"),
        ({"sequence": [{"modle": "x"}]}, "$.sequence[0].modle: Extra inputs are not permitted"),
        ({}, "$.sequence: Field required"),
    ],
)
def test_a_bad_sequence_gets_400_naming_the_json_path(proxy: Session, body: Any, error: str) -> None:
    status, answer, _ = call(proxy, "POST", "/verify/sequence", body, token="read-only")
    assert (status, answer["error"]) == (400, error)
