"""The run's own endpoints on real running sessions that the official OpenAI SDK calls through the proxy:
save what the proxy saw to a cassette that `cassette check` passes and a replay serves; load expectations
files, inline expectations and cassettes into a running mock (a bad file: 400 naming it and the JSON path,
nothing loaded); status saying what is loaded; a listing that shows a script's next turn and each definition
as it was given."""

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from llmproxy.control.client import Client, ControlError
from llmproxy.plan import mock_plan
from llmproxy.session import Listening, Session, replaying, running
from tests.mock.sdk_clients import openai_client

API_KEY = "sk-test"  # what openai_client sends: never in a saved cassette
CAPITAL = {"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris is the capital of France."}}


def ask(client: Any, question: str, stream: bool = False) -> str:
    messages = [{"role": "user", "content": question}]
    if stream:
        chunks = client.chat.completions.create(model="gpt-4o-mini", messages=messages, stream=True)
        return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    return str(answer.choices[0].message.content)


@pytest.fixture
def mock(tmp_path: Path) -> Iterator[Session]:
    """A mock with no expectations: each test loads what it needs."""
    with running(Session.of(mock_plan(None)), Listening(ca_directory=tmp_path / "ca")) as session:
        yield session


def control(session: Session) -> Client:
    return Client.from_environment(session.environment)


def check(cassette: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "llmproxy", "cassette", "check", str(cassette)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_save_writes_what_the_proxy_saw_as_the_recorder_writes_and_a_replay_serves_it(
    mock: Session, tmp_path: Path
) -> None:
    api = control(mock)
    api.add_expectations({"expectations": [CAPITAL]})
    with openai_client(mock) as client:
        assert ask(client, "The capital of France?") == "Paris is the capital of France."
        assert ask(client, "And the capital, streamed?", stream=True) == "Paris is the capital of France."
        with pytest.raises(openai.BadRequestError):  # missed: not saved by default
            ask(client, "unknown")
    cassette = tmp_path / "saved" / "session.json"
    saved = api.save(cassette)
    assert (saved.exchanges, saved.journal, saved.path) == (2, [1, 2], str(cassette))
    assert saved.summary.startswith(f"recorded 2 exchanges to {cassette} (openai 2; 1 streamed, 1 not")
    text = cassette.read_text()
    assert API_KEY not in text
    result = check(cassette)
    assert result.returncode == 0, result.stdout + result.stderr
    with pytest.raises(ControlError, match=rf"^{cassette} exists: send overwrite: true to replace it$") as refused:
        api.save(cassette)
    assert refused.value.status == 409
    assert cassette.read_text() == text
    missed = api.save(cassette, sources=["missed"], overwrite=True)
    assert (missed.exchanges, missed.journal) == (1, [3])
    api.save(cassette, overwrite=True)

    with replaying(cassette, listening=Listening(ca_directory=tmp_path / "ca")) as replay:
        with openai_client(replay) as client:
            assert ask(client, "The capital of France?") == "Paris is the capital of France."
            assert ask(client, "And the capital, streamed?", stream=True) == "Paris is the capital of France."
        assert control(replay).journal().counts.by_source == {"replayed": 2}


def test_load_reads_an_expectations_file_with_its_scripts_or_inline_expectations(mock: Session, tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    script = {"turns": [{"type": "assistant", "text": "First."}, {"type": "assistant", "text": "Second."}]}
    (tmp_path / "scripts" / "two.json").write_text(json.dumps(script))
    given = {"expectations": [{"match": {"model": "gpt-4o-mini"}, "script": "scripts/two.json"}]}
    (tmp_path / "expectations.json").write_text(json.dumps(given))
    api = control(mock)
    loaded = api.load(tmp_path / "expectations.json")
    assert (loaded.kind, loaded.files, loaded.added) == ("expectations", [str(tmp_path / "expectations.json")], [1])
    inline = api.load(
        inline={"expectations": [{"priority": 5, "match": {"model": "gpt-4o"}, "respond": {"text": "Hi"}}]}
    )
    assert (inline.kind, inline.added) == ("expectations", [2])
    with openai_client(mock) as client:
        assert ask(client, "one") == "First."
    [high, scripted] = api.expectations().expectations
    assert (high.id, scripted.id, scripted.next_turn) == (2, 1, {"": 2})
    assert api.status().expectations == 2


def test_a_bad_expectations_file_is_one_line_naming_it_and_the_path_and_nothing_is_loaded(
    mock: Session, tmp_path: Path
) -> None:
    api = control(mock)
    api.add_expectations({"expectations": [CAPITAL]})
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"expectations": [CAPITAL, {"respond": {"txt": "Hi"}}]}))
    with pytest.raises(ControlError, match=rf"^{bad}: \$\.expectations\[1\]\.respond\.txt: Extra inputs") as error:
        api.load(bad)
    assert error.value.status == 400
    assert "\n" not in str(error.value)
    missing_script = tmp_path / "missing.json"
    missing_script.write_text(json.dumps({"expectations": [{"script": "nowhere.json"}]}))
    with pytest.raises(ControlError, match=r"nowhere\.json: cannot read the script"):
        api.load(missing_script)
    with pytest.raises(ControlError, match=rf"^{tmp_path / 'none.json'}: no such file or folder$"):
        api.load(tmp_path / "none.json")
    assert api.status().expectations == 1


def test_load_a_cassette_into_a_mock_which_replays_it_after_its_expectations(mock: Session, tmp_path: Path) -> None:
    api = control(mock)
    api.add_expectations({"expectations": [CAPITAL]})
    with openai_client(mock) as client:
        ask(client, "The capital of France?")
    cassette = tmp_path / "cassettes" / "capital.json"
    api.save(cassette)
    api.clear_expectations()
    assert api.status().cassettes == []
    bad = tmp_path / "broken" / "bad.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"llmproxy_cassette": 1, "exchanges": [{"id": "one"}]}))
    with pytest.raises(ControlError, match=rf"^{bad}") as error:
        api.load(bad, kind="cassette")
    assert (error.value.status, "\n" in str(error.value)) == (400, False)
    assert mock.replay is None  # nothing loaded half

    loaded = api.load(cassette.parent)  # a folder of cassettes
    assert (loaded.kind, loaded.files, loaded.exchanges) == ("cassette", [str(cassette)], 1)
    assert [(c.path, c.exchanges) for c in api.status().cassettes] == [(str(cassette), 1)]
    with openai_client(mock) as client:
        assert ask(client, "The capital of France?") == "Paris is the capital of France."
        with pytest.raises(openai.BadRequestError):  # the network stays closed
            ask(client, "The capital of Italy?")
    assert [e.source for e in api.journal(since=1).entries] == ["replayed", "missed"]
    again = api.load(cassette)  # in a replay: added to what it serves, what it served staying served
    assert [c.exchanges for c in again.cassettes or []] == [1, 1]
    with openai_client(mock) as client:
        assert ask(client, "The capital of France?") == "Paris is the capital of France."
    status = api.status()
    assert (status.mode, status.replayed) == ("mock", 2)


def test_the_listing_gives_each_definition_as_it_was_given_and_sends_back_as_it_is(mock: Session) -> None:
    api = control(mock)
    given = [
        {"respond": {"text": "Hi"}},
        {"conversation": {"turns": [{"respond": {"text": "One"}}, {"respond": {"text": "Two"}}]}},
        {"script": {"turns": [{"type": "assistant", "text": "A"}]}, "times": 3},
    ]
    api.add_expectations({"expectations": given})
    listed = api.expectations().expectations
    assert [entry.definition.model_dump(mode="json", by_alias=True, exclude_unset=True) for entry in listed] == given
    raw = Client.from_environment(mock.environment)._call("GET", "/expectations")
    definitions = [entry["definition"] for entry in raw["expectations"]]
    assert definitions == given  # on the wire, no default filled in
    assert api.add_expectations({"expectations": definitions}) == [4, 5, 6]
