"""A recorded background response replays as it happened: the create answered `queued`, then each poll of
`GET /v1/responses/{id}` gets the next recorded status with the recorded id, until the completed one (the
openai SDK polling through the replaying proxy)."""

from pathlib import Path
from typing import Any

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.session import Listening, replaying
from tests.cassette.factory import exchange, request, response
from tests.mock.sdk_clients import openai_client

HOST = "api.openai.com"
ASKED = {"model": "gpt-5", "input": "Write the long report.", "background": True}


def _response(status: str, output: list[Any]) -> bytes:
    usage = {"input_tokens": 12, "output_tokens": 6, "total_tokens": 18} if status == "completed" else None
    body = {"id": "resp_bg1", "object": "response", "created_at": 1700000000, "status": status, "background": True}
    return orjson.dumps({**body, "model": "gpt-5", "output": output, "usage": usage})


def test_polls_replay_in_recorded_order(tmp_path: Path) -> None:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "The report.", "annotations": []}],
    }
    poll = request(None, host=HOST, path="/v1/responses/resp_bg1", method="GET")
    cassette = tmp_path / "background.json"
    writer = CassetteWriter.open(cassette, Redactor())
    writer.add(exchange(request(ASKED, host=HOST, path="/v1/responses"), response(_response("queued", []))))
    writer.add(exchange(poll, response(_response("in_progress", []))))
    writer.add(exchange(poll, response(_response("completed", [message]))))
    writer.close()

    with replaying(cassette, listening=Listening(ca_directory=tmp_path / "ca"), timing=None) as proxy:
        with openai_client(proxy) as client:
            created = client.responses.create(**ASKED)
            statuses = [created.status]
            while statuses[-1] in ("queued", "in_progress"):
                polled = client.responses.retrieve(created.id)
                assert polled.id == created.id == "resp_bg1"
                statuses.append(polled.status)
        assert proxy.misses == []
    assert statuses == ["queued", "in_progress", "completed"]
    assert polled.output_text == "The report."
    assert polled.usage is not None
    assert polled.usage.total_tokens == 18
