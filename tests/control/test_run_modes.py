"""Expectations in every mode: a record or replay run carries a mock stage with no expectations (nothing
answers from it until some are added), so expectations added while it runs answer first — before the
cassette in a replay, instead of the upstream in a recording, and what they answer is not recorded."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmproxy.control.client import Client
from llmproxy.plan import mock_plan
from llmproxy.session import Listening, Session, recording, replaying, running
from tests.control.test_run_api import CAPITAL, ask
from tests.mock.sdk_clients import openai_client


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    """A cassette that answers the capital question, saved from a mock."""
    with running(Session.of(mock_plan(None)), Listening(ca_directory=tmp_path / "ca")) as mock:
        control = Client.from_environment(mock.environment)
        control.add_expectations({"expectations": [CAPITAL]})
        with openai_client(mock) as client:
            ask(client, "The capital of France?")
        control.save(tmp_path / "capital.json")
    return tmp_path / "capital.json"


@pytest.fixture
def replay(cassette: Path, tmp_path: Path) -> Iterator[Session]:
    with replaying(cassette, listening=Listening(ca_directory=tmp_path / "ca")) as session:
        yield session


def test_an_expectation_added_to_a_replay_answers_instead_of_the_cassette(replay: Session) -> None:
    control = Client.from_environment(replay.environment)
    assert control.expectations().expectations == []  # a mock stage with none: the replay answers
    with openai_client(replay) as client:
        assert ask(client, "The capital of France?") == "Paris is the capital of France."
        control.add_expectations({"expectations": [{**CAPITAL, "respond": {"text": "Lyon, today."}, "times": 1}]})
        assert ask(client, "The capital of France?") == "Lyon, today."
    assert [entry.source for entry in control.journal().entries] == ["replayed", "mocked"]
    status = control.status()
    assert (status.mode, status.expectations, status.replayed) == ("replay", 1, 1)
    assert [(cassette.exchanges,) for cassette in status.cassettes] == [(1,)]


def test_an_expectation_added_to_a_recording_answers_without_the_upstream_and_is_not_recorded(
    tmp_path: Path,
) -> None:
    recorded = tmp_path / "recorded.json"
    with recording(recorded, Listening(ca_directory=tmp_path / "ca")) as proxy:
        control = Client.from_environment(proxy.environment)
        assert control.status().recording == str(recorded)
        control.add_expectations({"expectations": [CAPITAL]})
        with openai_client(proxy) as client:  # api.openai.com is not reachable from here: only the mock answers
            assert ask(client, "The capital of France?") == "Paris is the capital of France."
        assert [entry.source for entry in control.journal().entries] == ["mocked"]
        assert control.status().expectations == 1
    assert proxy.record is not None
    assert proxy.record.recorded is not None
    assert proxy.record.recorded.exchanges == 0
    assert json.loads(recorded.read_text())["exchanges"] == []


def test_explain_chain_shows_the_empty_mock_stage_of_a_record_run(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from llmproxy.cli import main

    result = CliRunner().invoke(main, ["record", "--cassette", str(tmp_path / "c.json"), "--explain-chain"])
    assert "  mock: no expectations until the control API adds some" in result.output.splitlines()
    result = CliRunner().invoke(
        main, ["record", "--cassette", str(tmp_path / "c.json"), "--journal-size", "0", "--explain-chain"]
    )
    assert "  mock: no expectations until the control API adds some" in result.output.splitlines()
