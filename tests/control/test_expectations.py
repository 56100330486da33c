"""Expectations over REST on a real running mock, with the official OpenAI SDK as the client: the file's
entries listed with what they served, entries added in the file's own JSON (their `times` and `priority`
holding), one removed, all cleared; and the refusals — an invalid entry named by its JSON path, the read-only
token, a run with no mock."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from llmproxy.environment import CONTROL_TOKEN_VARIABLE
from llmproxy.intercept.options import intercept_plan
from llmproxy.session import Listening, Session, mocking, replaying
from tests.control.test_api import call
from tests.mock.sdk_clients import openai_client, serving

ROOT = Path(__file__).resolve().parents[2]
EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {"match": {"latestMessageContains": "weather"}, "respond": {"text": "Sunny."}, "times": 1},
        {
            "conversation": {
                "match": {"latestMessageContains": "story"},
                "turns": [{"respond": {"text": "Once upon a time"}}, {"respond": {"text": "The end."}}],
            }
        },
    ]
}


@pytest.fixture
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    yield from serving(tmp_path_factory, EXPECTATIONS)


def ask(client: Any, text: str) -> str:
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])
    return str(answer.choices[0].message.content)


def listed(proxy: Session) -> list[dict[str, Any]]:
    status, answer, _ = call(proxy, "GET", "/expectations", token="read-only")
    assert status == 200
    return list(answer["expectations"])


def test_the_files_entries_are_listed_with_what_they_served(proxy: Session) -> None:
    with openai_client(proxy) as client:
        assert ask(client, "weather?") == "Sunny."
        assert ask(client, "a story") == "Once upon a time"
    weather, story = listed(proxy)
    assert (weather["id"], weather["times"], weather["served"], weather["remaining"]) == (1, 1, 1, 0)
    assert weather["definition"]["respond"]["text"] == "Sunny."
    assert (story["id"], story["served"], story["nextTurn"]) == (2, 1, {"": 2})
    assert "times" not in story


def test_added_expectations_answer_by_their_priority_and_times(proxy: Session) -> None:
    added = {
        "expectations": [
            {"match": {"latestMessageContains": "weather"}, "respond": {"text": "Rain."}, "priority": 5, "times": 1},
            {"match": {"latestMessageContains": "tide"}, "respond": {"text": "High at noon."}},
        ]
    }
    assert call(proxy, "POST", "/expectations", added)[:2] == (200, {"added": [3, 4]})
    assert [entry["id"] for entry in listed(proxy)] == [3, 1, 2, 4]  # by priority, then as if appended
    with openai_client(proxy) as client:
        assert ask(client, "weather?") == "Rain."  # the added one, by its priority
        assert ask(client, "weather?") == "Sunny."  # its one time used: the file's answers
        assert ask(client, "tide?") == "High at noon."


def test_one_removed_then_all_cleared(proxy: Session) -> None:
    assert call(proxy, "DELETE", "/expectations/1")[:2] == (200, {"removed": 1})
    status, answer, _ = call(proxy, "DELETE", "/expectations/1")
    assert (status, answer["error"]) == (404, "no expectation 1: GET /llmproxy/api/v1/expectations lists them")
    with openai_client(proxy) as client:
        with pytest.raises(openai.BadRequestError):
            ask(client, "weather?")
        assert call(proxy, "DELETE", "/expectations")[:2] == (200, {"cleared": 1})
        with pytest.raises(openai.BadRequestError):
            ask(client, "a story")
    assert listed(proxy) == []
    assert [entry["source"] for entry in call(proxy, "GET", "/journal")[1]["entries"]] == ["missed", "missed"]


def test_expectations_added_for_a_test_answer_only_that_tests_requests(proxy: Session) -> None:
    for test, text in (("test-a", "From A."), ("test-b", "From B.")):
        body = {"expectations": [{"match": {"latestMessageContains": "who"}, "respond": {"text": text}}]}
        assert call(proxy, "POST", f"/expectations?testId={test}", body)[0] == 200
    with openai_client(proxy) as client:
        for test, text in (("test-a", "From A."), ("test-b", "From B.")):
            asked = [{"role": "user", "content": "who?"}]
            sent = {"x-llmproxy-test-id": test}
            answer = client.chat.completions.create(model="gpt-4o-mini", messages=asked, extra_headers=sent)
            assert answer.choices[0].message.content == text
        with pytest.raises(openai.BadRequestError, match="x-llmproxy-test-id: expected 'test-a', got None"):
            ask(client, "who?")  # no test id: neither test's expectation answers it
    [only_a] = call(proxy, "GET", "/expectations?testId=test-a")[1]["expectations"]
    assert (only_a["id"], only_a["testId"], only_a["served"]) == (3, "test-a", 1)
    assert call(proxy, "DELETE", "/expectations?testId=test-a")[:2] == (200, {"cleared": 1})
    assert [entry.get("testId") for entry in listed(proxy)] == [None, None, "test-b"]
    journal = call(proxy, "GET", "/journal?testId=test-b")[1]["entries"]
    assert [(entry["seq"], entry["source"]) for entry in journal] == [(2, "mocked")]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"expectations": [{"respond": {"txt": "Hi"}}]}, "$.expectations[0].respond.txt: Extra inputs"),
        ({"expectations": [{"respond": {"text": "Hi"}, "times": 0}]}, "$.expectations[0].times: Input should be"),
        ({"expectation": []}, "$.expectations: Field required"),
        ({"expectations": [{"script": "no-such-script.json"}]}, "no-such-script.json"),
    ],
)
def test_an_invalid_entry_gets_400_naming_its_json_path(proxy: Session, body: Any, said: str) -> None:
    status, answer, _ = call(proxy, "POST", "/expectations", body)
    assert status == 400
    assert said in answer["error"], answer["error"]
    assert len(listed(proxy)) == 2  # nothing was added


def test_a_body_that_is_not_json_gets_400(proxy: Session) -> None:
    status, answer, _ = call(proxy, "POST", "/expectations", "not an object")
    assert status == 400
    assert answer["error"].startswith("$: Input should be")


def test_the_read_only_token_cannot_add_remove_or_clear(proxy: Session) -> None:
    body = {"expectations": [{"respond": {"text": "Hi"}}]}
    assert call(proxy, "POST", "/expectations", body, token="read-only")[0] == 403
    assert call(proxy, "DELETE", "/expectations/1", token="read-only")[0] == 403
    assert call(proxy, "DELETE", "/expectations", token="read-only")[0] == 403
    assert len(listed(proxy)) == 2


def test_a_replay_holds_expectations_too(tmp_path: Path) -> None:
    """Its mock stage starts with none (tests/control/test_run_modes.py has them answer)."""
    listening = Listening(ca_directory=tmp_path / "ca")
    with replaying(ROOT / "cassettes" / "quickstart.json", listening=listening) as proxy:
        assert proxy.environment[CONTROL_TOKEN_VARIABLE]
        assert call(proxy, "GET", "/expectations")[:2] == (200, {"expectations": []})
        assert call(proxy, "GET", "/status")[1]["mode"] == "replay"


def test_reset_starts_the_run_afresh(proxy: Session) -> None:
    chaos = {"host": "api.openai.com", "chaos": {"errorStatus": 503, "errorProbability": 0.0}}
    assert call(proxy, "PUT", proxy.control_url, chaos)[0] == 200
    with openai_client(proxy) as client:
        assert ask(client, "weather?") == "Sunny."
    assert call(proxy, "POST", "/reset", token="read-only")[0] == 403
    status, answer, _ = call(proxy, "POST", "/reset")
    assert (status, answer) == (200, {"expectations": 2, "journal": 1, "chaos": 1, "counters": True})
    assert listed(proxy) == []
    assert call(proxy, "GET", proxy.control_url)[1]["services"] == {}
    assert call(proxy, "GET", "/journal")[1]["entries"] == []
    with openai_client(proxy) as client, pytest.raises(openai.BadRequestError, match="none were given"):
        ask(client, "weather?")


def test_reset_starts_the_quota_counters_afresh(tmp_path: Path) -> None:
    """A mock allowing one request a minute: the second is refused with a 429; after a reset, one more gets in."""
    expectations = tmp_path / "expectations.json"
    expectations.write_text(json.dumps(EXPECTATIONS))
    listening = Listening(ca_directory=tmp_path / "ca")
    with mocking(expectations, listening, intercept=intercept_plan(rpm=1)) as proxy, openai_client(proxy) as client:
        assert ask(client, "weather?") == "Sunny."
        with pytest.raises(openai.RateLimitError):
            ask(client, "a story")
        assert call(proxy, "POST", "/reset")[1]["counters"] is True
        assert call(proxy, "POST", "/expectations", EXPECTATIONS)[0] == 200
        assert ask(client, "a story") == "Once upon a time"
