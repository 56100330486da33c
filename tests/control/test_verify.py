"""Verifying what a real running mock received, over the control API: the official OpenAI SDK sends the
requests, the verify counts them with the expectations file's own `match`, and a failing verify answers with
what came nearest and why, not just false."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from llmproxy.session import Session
from tests.control.test_api import call
from tests.mock.sdk_clients import openai_client, serving
from tests.test_session_page import BLOCK

EXPECTATIONS: dict[str, Any] = {
    "expectations": [{"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris."}}]
}


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    for session in serving(tmp_path_factory, EXPECTATIONS):
        with openai_client(session) as client:
            for model, text, test in (
                ("gpt-4o-mini", "The capital of France?", "test-a"),
                ("gpt-4o-mini", "The capital of Spain?", "test-b"),
            ):
                asked = [{"role": "user", "content": text}]
                client.chat.completions.create(model=model, messages=asked, extra_headers={"x-llmproxy-test-id": test})
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "Weather?"}])
        yield session


@pytest.mark.parametrize(
    ("verify", "ok", "count", "expected"),
    [
        ({"match": {"latestMessageContains": "capital"}, "exactly": 2}, True, 2, "exactly 2"),
        ({"match": {"latestMessageContains": "capital"}, "atLeast": 3}, False, 2, "at least 3"),
        ({"match": {"model": "gpt-4o"}, "atMost": 0}, False, 1, "exactly 0"),
        ({"match": {"model": "gpt-4o"}, "atMost": 2}, True, 1, "at most 2"),
        ({"match": {"model": "gpt-4o"}, "atLeast": 1, "atMost": 2}, True, 1, "at least 1 and at most 2"),
        ({}, True, 3, "at least 1"),
        ({"source": "missed", "exactly": 1}, True, 1, "exactly 1"),
        ({"testId": "test-b", "match": {"latestMessageMatches": "Spain|France"}, "exactly": 1}, True, 1, "exactly 1"),
    ],
)
def test_a_count_of_the_requests_that_hold_to_a_match(
    proxy: Session, verify: dict[str, Any], ok: bool, count: int, expected: str
) -> None:
    status, answer, _ = call(proxy, "POST", "/verify/requests", verify, token="read-only")  # verifying only reads
    assert status == 200
    assert (answer["ok"], answer["count"], answer["expected"]) == (ok, count, expected)


def test_a_failing_verify_says_what_came_nearest_and_why(proxy: Session) -> None:
    verify = {"match": {"latestMessageContains": "capital", "model": "gpt-4o"}, "atLeast": 1}
    status, answer, _ = call(proxy, "POST", "/verify/requests", verify)
    assert (status, answer["ok"], answer["matched"]) == (200, False, [])
    failed = {near["seq"]: (near["model"], near["failed"]) for near in answer["closest"]}
    assert failed == {  # each fails one predicate of the two: the nearest there are
        1: ("gpt-4o-mini", ["model: expected gpt-4o, got gpt-4o-mini"]),
        2: ("gpt-4o-mini", ["model: expected gpt-4o, got gpt-4o-mini"]),
        3: ("gpt-4o", ["latestMessageContains: 'capital' not in 'Weather?'"]),
    }
    verify = {"match": {"latestMessageContains": "capital", "model": "gpt-4o-mini"}, "exactly": 1}
    answer = call(proxy, "POST", "/verify/requests", verify)[1]
    assert (answer["ok"], answer["count"], answer["matched"], answer["closest"][0]["seq"]) == (False, 2, [1, 2], 3)


@pytest.mark.parametrize(
    ("verify", "said"),
    [
        ({"exactly": 1, "atLeast": 1}, "$: give exactly, or atLeast and/or atMost, not both"),
        ({"atLeast": 3, "atMost": 1}, "$: atLeast 3 is more than atMost 1"),
        ({"match": {"latestMessageMatches": "("}}, "$.match.latestMessageMatches: not a regular expression"),
        ({"match": {"modle": "gpt-4o"}}, "$.match.modle: Extra inputs are not permitted"),
        ({"exactly": -1}, "$.exactly: Input should be greater than or equal to 0"),
    ],
)
def test_a_bad_verify_gets_400_naming_the_json_path(proxy: Session, verify: dict[str, Any], said: str) -> None:
    status, answer, _ = call(proxy, "POST", "/verify/requests", verify)
    assert status == 400
    assert answer["error"].startswith(said), answer["error"]


def test_the_documented_verify_holds_for_what_it_describes(proxy: Session) -> None:
    """docs/control.md's verify body, sent as written, after the two requests it counts."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "control.md").read_text()
    section = page.split("\n## Verify over the journal\n", 1)[1].split("\n## ", 1)[0]
    [body] = [json.loads(code) for name, language, code in BLOCK.findall(section) if language == "json" and not name]
    status, answer, _ = call(proxy, "POST", "/verify/requests", body)
    assert (status, answer["ok"], answer["matched"]) == (200, True, [1, 2])
