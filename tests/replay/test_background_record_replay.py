"""A Responses background run recorded through the proxy with the official openai SDK — the create, a poll,
a stream resumed after event N — against a local upstream (`llmproxy mock`, reached with `--map`), then
replayed offline in order with the recorded ids, and turned into expectations the mock plays again. The
cassette links the run's exchanges (`background: {response_id, create}`), so readers see one logical run."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from llmproxy.cassette.store import load_cassette
from llmproxy.mock.from_cassette import convert, dumps
from llmproxy.session import Listening, mocking, recording, replaying
from tests.mock.sdk_clients import openai_client

pytest.importorskip("openai")

ANSWER = "The long report is ready, section by section."
ASKED: dict[str, Any] = {"model": "gpt-5", "input": "Write the long report.", "background": True}


@dataclass
class Run:
    """What the client saw while recording, and the cassette it left."""

    cassette: Path
    tmp: Path
    created: Any
    polled: Any
    resumed: list[Any]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("background")
    expectations = {"expectations": [{"match": {"latestMessageContains": "long report"}, "respond": {"text": ANSWER}}]}
    (tmp / "upstream.json").write_text(json.dumps(expectations))
    cassette = tmp / "background.json"
    with mocking(tmp / "upstream.json", Listening(ca_directory=tmp / "ca-upstream")) as upstream:
        mapped = Listening(mapping={"api.openai.com": upstream.base_url}, ca_directory=tmp / "ca")
        with recording(cassette, mapped) as proxy, openai_client(proxy) as client:
            created = client.responses.create(**ASKED)
            polled = client.responses.retrieve(created.id)
            resumed = list(client.responses.retrieve(created.id, stream=True, starting_after=2))
    return Run(cassette, tmp, created, polled, resumed)


def test_the_recording_links_the_run(run: Run) -> None:
    assert (run.created.status, run.polled.status) == ("queued", "completed")
    exchanges = load_cassette(run.cassette).exchanges
    assert [(e.operation, e.streaming) for e in exchanges] == [
        ("responses", False),
        ("response_retrieve", False),
        ("response_retrieve", True),
    ]
    links = [e.background.model_dump() if e.background else None for e in exchanges]
    assert links == [{"response_id": run.created.id, "create": exchanges[0].id}] * 3
    stored = json.loads(run.cassette.read_text())["exchanges"][1]
    assert stored["background"] == {"response_id": run.created.id, "create": exchanges[0].id}


def test_replays_offline_in_order_with_the_recorded_ids(run: Run) -> None:
    with replaying(run.cassette, listening=Listening(ca_directory=run.tmp / "ca"), timing=None) as proxy:
        with openai_client(proxy) as client:
            created = client.responses.create(**ASKED)
            polled = client.responses.retrieve(created.id)
        assert proxy.misses == []
    assert (created.id, created.status) == (run.created.id, "queued")
    assert (polled.id, polled.status, polled.output_text) == (run.created.id, "completed", ANSWER)


def test_a_resumed_stream_replays_after_event_n(run: Run) -> None:
    """`GET /v1/responses/{id}?stream=true&starting_after=2` replays the events after the second, ending
    with the completed response, as the client saw them while recording."""
    assert run.resumed[0].sequence_number == 3
    with replaying(run.cassette, listening=Listening(ca_directory=run.tmp / "ca"), timing=None) as proxy:
        with openai_client(proxy) as client:
            client.responses.create(**ASKED)
            client.responses.retrieve(run.created.id)
            resumed = list(client.responses.retrieve(run.created.id, stream=True, starting_after=2))
        assert proxy.misses == []
    assert [event.model_dump() for event in resumed] == [event.model_dump() for event in run.resumed]
    assert resumed[-1].type == "response.completed"
    assert resumed[-1].response.output_text == ANSWER


def test_to_expectations_answers_the_run_with_its_final_answer(run: Run) -> None:
    """The create's turn answers with what the run produced (the mock plays queued → completed itself)."""
    conversion = convert(load_cassette(run.cassette))
    path = run.tmp / "expectations.json"
    path.write_bytes(dumps(conversion.expectations))
    (turn,) = json.loads(path.read_text())["expectations"][0]["conversation"]["turns"]
    assert turn["respond"]["text"] == ANSWER
    with mocking(path, Listening(ca_directory=run.tmp / "ca-mock")) as mock, openai_client(mock) as client:
        queued = client.responses.create(**ASKED)
        assert queued.status == "queued"
        assert client.responses.retrieve(queued.id).output_text == ANSWER
