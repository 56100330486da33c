"""A Responses background run in a report: the create answered `queued` without usage, the polls found it
running, then finished with its usage. The report prices the run once, as the create's call with the final
answer's usage; the polls are counted as skipped, not as calls. A run no poll saw finish stays as recorded."""

from pathlib import Path
from typing import Any

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from tests.analysis.reports import report_of
from tests.cassette.factory import exchange, request, response

HOST = "api.openai.com"
ASKED = {"model": "gpt-5", "input": "Write the long report.", "background": True}
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "The report.", "annotations": []}],
}


def _answer(ident: str, status: str) -> bytes:
    done = status == "completed"
    body: dict[str, Any] = {"id": ident, "object": "response", "created_at": 1700000000, "status": status}
    usage = {"input_tokens": 1200, "output_tokens": 600, "total_tokens": 1800} if done else None
    return orjson.dumps(
        {**body, "background": True, "model": "gpt-5", "output": [MESSAGE] if done else [], "usage": usage}
    )


def _cassette(tmp_path: Path, *statuses: str) -> str:
    path = tmp_path / "background.json"
    writer = CassetteWriter.open(path, Redactor())
    writer.add(exchange(request(ASKED, host=HOST, path="/v1/responses"), response(_answer("resp_bg1", "queued"))))
    poll = request(None, host=HOST, path="/v1/responses/resp_bg1", method="GET")
    for status in statuses:
        writer.add(exchange(poll, response(_answer("resp_bg1", status))))
    writer.close()
    return str(path)


def test_a_finished_run_is_priced_once_with_its_final_usage(tmp_path: Path) -> None:
    report = report_of(_cassette(tmp_path, "in_progress", "completed"))
    (call,) = report.calls
    assert (call.exchangeId, call.inputTokens, call.outputTokens, call.tokensEstimated) == (1, 1200, 600, False)
    assert str(call.estimatedCostUsd) == "0.0075"  # gpt-5: 1,200 in at $1.25/M, 600 out at $10/M
    assert report.sources[0].skipped == {"background poll": 2}


def test_a_run_never_seen_finished_stays_as_recorded(tmp_path: Path) -> None:
    report = report_of(_cassette(tmp_path, "in_progress"))
    (call,) = report.calls
    assert (call.exchangeId, call.outputTokens, call.tokensEstimated) == (1, 0, True)  # the prompt estimated
    assert report.sources[0].skipped == {"background poll": 1}
