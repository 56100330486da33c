"""Background responses through the official openai SDK against `llmproxy mock`: the create is answered
`queued`, a poll gets the completed answer with the same id, a stream resumes after the event the client
already has, a cancel cancels, a delete deletes; ids the mock never made are not its to answer."""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.mock.sdk_clients import openai_client, serving

ANSWER = "The report is ready."
EXPECTATIONS: dict[str, Any] = {
    "expectations": [
        {"match": {"latestMessageContains": "report"}, "respond": {"text": ANSWER}},
        {
            "match": {"path": "/v1/responses/resp_elsewhere"},
            "http": {"status": 404, "json": {"error": {"message": "no"}}},
        },
    ]
}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    for proxy in serving(tmp_path_factory, EXPECTATIONS):
        with openai_client(proxy) as openai:
            yield openai


def test_create_queued_then_poll_completed(client: Any) -> None:
    queued = client.responses.create(model="gpt-5", input="write the report", background=True)
    assert queued.status == "queued"
    assert queued.background is True
    assert queued.output == []
    done = client.responses.retrieve(queued.id)
    assert done.id == queued.id
    assert done.status == "completed"
    assert done.output_text == ANSWER
    assert done.usage is not None  # estimated, as any mocked answer without usage


def test_stream_resumes_after_the_last_event_seen(client: Any) -> None:
    queued = client.responses.create(model="gpt-5", input="the report, streamed", background=True)
    whole = list(client.responses.retrieve(queued.id, stream=True))
    assert [event.sequence_number for event in whole] == list(range(len(whole)))
    assert whole[-1].type == "response.completed"
    resumed = list(client.responses.retrieve(queued.id, stream=True, starting_after=3))
    assert [event.sequence_number for event in resumed] == list(range(4, len(whole)))
    assert resumed[-1].response.output_text == ANSWER


def test_cancel_then_delete(client: Any) -> None:
    openai = pytest.importorskip("openai")
    queued = client.responses.create(model="gpt-5", input="a report to cancel", background=True)
    assert client.responses.cancel(queued.id).status == "cancelled"
    assert client.responses.retrieve(queued.id).status == "cancelled"
    client.responses.delete(queued.id)
    with pytest.raises(openai.APIStatusError):  # gone: no longer the mock's, and no expectation has it
        client.responses.retrieve(queued.id)


def test_ids_the_mock_did_not_make_go_to_the_expectations(client: Any) -> None:
    openai = pytest.importorskip("openai")
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve("resp_elsewhere")
