"""The default preset: a request made in another folder, with another HOME, at another time, with fresh run ids
matches its recording; a request that really differs still misses, and says where."""

import uuid

import pytest

from llmproxy.cassette.matching import RequestView
from llmproxy.cassette.model import Exchange, JsonBody, Places, Request, Timings
from llmproxy.cassette.neutral import Neutral, mentions
from llmproxy.cassette.replay_index import MatchOptions, OnExhausted, ReplayHit, ReplayIndex, ReplayMiss
from tests.cassette.factory import STARTED

A = Places(cwd="/srv/runs/alpha-project", home="/srv/runs/alpha-project/home")
B = Places(cwd="/var/tmp/b", home="/var/tmp/b/home")
QWEN = Places(cwd="/x/work/proj", home="/x/homes/alice")  # HOME beside the working directory, not above it
UNDER_HOME = Places(cwd="/home/alice/code/app", home="/home/alice")


def prompt(places: Places, when: str, question: str = "List the files.") -> dict[str, object]:
    """A request as a coding CLI nobody wrote a preset for makes it: its places and the time in the system
    prompt and tool descriptions, fresh ids in its metadata, a budget derived from the prompt's length."""
    home = places.home or ""
    system = (
        f"You are an agent. Working directory: {places.cwd}\n"
        f"Project memory in {home}/.agent/projects/{places.cwd.replace('/', '-')}/memory.md\n"
        f"<current_datetime>{when}</current_datetime>\ntime: {when[11:19]}\n"
    )
    return {
        "model": "m",
        "system": system,
        "max_tokens": 250_000 - len(system) // 4,
        "metadata": {"user_id": f"user_{uuid.uuid4().hex}_session_{uuid.uuid4()}"},
        "session_id": str(uuid.uuid4()),
        "messages": [{"role": "user", "content": question}],
        "tools": [{"name": "read", "description": f"Read a file under {places.cwd} (e.g. {places.cwd}/src/x.py)"}],
    }


def request(body: object) -> Request:
    return Request(
        method="POST", url="https://llm.example/v1/chat", http_version="HTTP/1.1", headers=[], body=JsonBody(json=body)
    )


def recorded(body: object, places: Places | None, exchange_id: int = 1) -> Exchange:
    return Exchange(id=exchange_id, request=request(body), timings=Timings(started_at=STARTED), places=places)


def neutral_text(text: str, places: Places) -> str:
    neutralised = Neutral(places).apply({"text": text})
    assert isinstance(neutralised.body, dict)
    return str(neutralised.body["text"])


@pytest.mark.parametrize(
    ("places", "text", "expected"),
    [
        (A, "cd /srv/runs/alpha-project && ls", "cd <cwd> && ls"),
        (A, "cat /srv/runs/alpha-project/home/.config/x.json", "cat <home>/.config/x.json"),
        (A, "file:///srv/runs/alpha-project/src/a.py:3", "file://<cwd>/src/a.py:3"),
        (A, "in ~/.claude/projects/-srv-runs-alpha-project/", "in ~/.claude/projects/<cwd>/"),
        (QWEN, "settings at ../../homes/alice/.qwen/settings.json", "settings at <home>/.qwen/settings.json"),
        (UNDER_HOME, "open ~/code/app/README.md", "open <cwd>/README.md"),
        (
            A,
            "Settings: home/.agent/settings.json, at home/office, /usr/home/.x",
            "Settings: <home>/.agent/settings.json, at home/office, /usr/home/.x",
        ),
        # a longer name is another place, and text that only looks alike stays
        (
            A,
            "/srv/runs/alpha-project2/x and /srv/runs/alpha-project.bak",
            "/srv/runs/alpha-project2/x and /srv/runs/alpha-project.bak",
        ),
        (A, "It ends in /srv/runs/alpha-project.", "It ends in <cwd>."),
        (QWEN, "go to ../.. and ../../homes", "go to ../.. and ../../homes"),
        # a run's id as a folder or file name under a place (Copilot CLI's session state), not elsewhere
        (
            A,
            "state in /srv/runs/alpha-project/home/.copilot/session-state/63782376-188b-464e-b22b-d24df94ed98f/plan.md",
            "state in <home>/.copilot/session-state/<uuid>/plan.md",
        ),
        (A, "/srv/runs/alpha-project/0b2f6e1c-9d1a-4c7e-8a51-3f0e2d9c4b7a.log", "<cwd>/<uuid>.log"),
        (
            A,
            "/opt/63782376-188b-464e-b22b-d24df94ed98f and id 63782376-188b-464e-b22b-d24df94ed98f",
            "/opt/63782376-188b-464e-b22b-d24df94ed98f and id 63782376-188b-464e-b22b-d24df94ed98f",
        ),
    ],
)
def test_the_places_are_neutralised_wherever_they_appear(places: Places, text: str, expected: str) -> None:
    assert neutral_text(text, places) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-28",
        "2026-11-28T22:16",
        "2026-11-28T22:16:41Z",
        "2026-11-28T22:16:41.123Z",
        "2026-11-28 22:16:41.123456+01:00",
        "Saturday, November 28, 2026",
        "Sat Nov 28 2026",
    ],
)
def test_date_times_at_any_precision_are_neutralised(text: str) -> None:
    assert any(ch.isdigit() for ch in text)
    assert not any(ch.isdigit() for ch in neutral_text(f"<current_datetime>{text}</current_datetime>", B))
    assert neutral_text("time: 10:04:59.120 PM", B) == "time: <time>"


def test_ids_are_neutralised_in_the_fields_that_hold_them_not_in_what_the_user_wrote() -> None:
    run = str(uuid.uuid4())
    body = {"session_id": run, "metadata": {"user_id": f"user_{'ab' * 32}"}, "messages": [{"content": run}]}
    neutralised = Neutral(None).apply(body).body
    assert neutralised["session_id"] == "<uuid>"
    assert neutralised["metadata"] == {"user_id": "user_<id>"}
    assert neutralised["messages"] == [{"content": run}]


def test_a_request_made_elsewhere_later_with_fresh_ids_is_served_what_was_recorded() -> None:
    index = ReplayIndex([recorded(prompt(A, "2026-11-28T22:16:41.123Z"), A)], MatchOptions(places=B))
    again = prompt(B, "2026-12-01T08:00:00.999Z")
    assert again["max_tokens"] != prompt(A, "2026-11-28T22:16:41.123Z")["max_tokens"]  # derived from the length
    assert isinstance(index.take(request(again), None), ReplayHit)


def test_a_real_difference_still_misses_and_the_diagnostic_shows_it_neutralised() -> None:
    index = ReplayIndex([recorded(prompt(A, "2026-11-28T22:16:41.123Z"), A)], MatchOptions(places=B))
    miss = index.take(request(prompt(B, "2026-12-01T08:00:00Z", "Delete the files.")), None)
    assert isinstance(miss, ReplayMiss)
    assert [d.path for d in miss.differences] == ["$.messages[0].content"]
    assert "recorded 'List the files.', received 'Delete the files.'" in miss.explain()


def test_a_budget_further_apart_than_the_places_explain_misses() -> None:
    body = prompt(A, "2026-11-28T22:16:41Z")
    index = ReplayIndex([recorded(body, A)], MatchOptions(places=B))
    other = prompt(B, "2026-11-28T22:16:41Z") | {"max_tokens": 1024}
    miss = index.take(request(other), None)
    assert isinstance(miss, ReplayMiss)
    assert miss.closest is not None
    assert miss.closest.id == 1
    assert [(d.path, d.recorded, d.received) for d in miss.differences] == [
        ("$.max_tokens", str(body["max_tokens"]), "1024")
    ]
    # with nothing neutralised, a budget must be the same
    plain = {"model": "m", "max_tokens": 100, "messages": []}
    exact = ReplayIndex([recorded(plain, None)], MatchOptions(places=B))
    assert isinstance(exact.take(request(plain | {"max_tokens": 101}), None), ReplayMiss)
    assert isinstance(exact.take(request(plain), None), ReplayHit)
    # nor does serving its last again, when every recording of the request was served
    again = ReplayIndex([recorded(plain, None)], MatchOptions(on_exhausted=OnExhausted.REPEAT_LAST, places=B))
    assert isinstance(again.take(request(plain), None), ReplayHit)
    assert isinstance(again.take(request(plain), None), ReplayHit)
    assert isinstance(again.take(request(plain | {"max_tokens": 101}), None), ReplayMiss)


def test_a_run_started_in_home_matches_one_started_elsewhere() -> None:
    in_home = Places(cwd="/home/alice", home="/home/alice")
    index = ReplayIndex([recorded(prompt(in_home, "2026-11-28T22:16:41Z"), in_home)], MatchOptions(places=B))
    assert isinstance(index.take(request(prompt(B, "2026-11-28T22:16:41Z")), None), ReplayHit)


def test_a_cassette_that_does_not_say_where_it_was_recorded_is_compared_with_the_places_of_now() -> None:
    index = ReplayIndex([recorded(prompt(B, "2026-11-28T22:16:41Z"), None)], MatchOptions(places=B))
    assert isinstance(index.take(request(prompt(B, "2026-11-29T01:00:00Z")), None), ReplayHit)


def test_preset_none_compares_requests_as_sent() -> None:
    index = ReplayIndex([recorded(prompt(A, "2026-11-28T22:16:41Z"), A)], MatchOptions(preset="none", places=B))
    miss = index.take(request(prompt(B, "2026-11-28T22:16:41Z")), None)
    assert isinstance(miss, ReplayMiss)
    assert "/srv/runs/alpha-project" in miss.explain()


def test_a_request_view_shows_the_neutral_forms() -> None:
    view = RequestView.of(request(prompt(A, "2026-11-28T22:16:41Z")), None, None, (), Neutral(A))
    assert view.body["system"].startswith("You are an agent. Working directory: <cwd>\nProject memory in <home>/")
    assert view.body["max_tokens"] == "<budget>"


def test_an_exchange_keeps_its_places_only_when_its_request_holds_them() -> None:
    assert mentions(b'{"system":"cwd: /srv/runs/alpha-project"}', A)
    assert mentions(b'{"system":"cwd: \\/srv\\/runs\\/alpha-project"}', A)
    assert not mentions(b'{"system":"hello"}', A)
