"""The request log under load: memory keeps the latest entries and the counts, the summary lists the latest
requests and says where the rest are, and `--log FILE` keeps every entry."""

from pathlib import Path

import orjson

from llmproxy.cassette.redact import Redactor
from llmproxy.mock import spec
from llmproxy.mock.engine import MockDecision, MockMiss
from llmproxy.mock.log import KEPT, SHOWN, MockLog
from llmproxy.mock.reply import MockReply
from llmproxy.mock.request import MockRequest

REQUEST = MockRequest(route=None, host="api.example.com", path="/v1/things")
ANSWERED = MockDecision(spec.Respond(text="ok"), "expectation 1", 1)
REPLY = MockReply(200, ())
MISS = MockMiss(None, ())


def test_memory_keeps_the_latest_entries_and_every_count(tmp_path: Path) -> None:
    path = tmp_path / "mock.jsonl"
    log = MockLog(Redactor(), path)
    total = 3 * KEPT + 7
    for seq in range(1, total + 1):
        if seq % 1000 == 0:
            log.missed(REQUEST, MISS)
        else:
            log.answered(REQUEST, ANSWERED, REPLY)
    summary = log.summary()
    log.close()

    assert KEPT <= len(log.entries) <= 2 * KEPT
    assert log.entries[-1]["seq"] == total
    assert [entry["seq"] for entry in log.entries] == list(range(total - len(log.entries) + 1, total + 1))
    assert (log.count, log.missed_count) == (total, total // 1000)
    lines = summary.splitlines()
    assert lines[0] == f"mock answered {total - total // 1000} of {total} requests"
    assert lines[1] == f"  … {total - SHOWN} earlier requests not listed (the --log file has them all)"
    assert len(lines) == 2 + SHOWN
    assert lines[-1] == f"  {total}. api.example.com (turn index -): expectation 1"
    written = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert [entry["seq"] for entry in written] == list(range(1, total + 1))


def test_a_short_run_lists_every_request() -> None:
    log = MockLog(Redactor())
    log.answered(REQUEST, ANSWERED, REPLY)
    log.missed(REQUEST, MISS)
    assert log.summary().splitlines() == [
        "mock answered 1 of 2 requests",
        "  1. api.example.com (turn index -): expectation 1",
        "  2. api.example.com (turn index -): no expectation matched",
    ]
    assert [entry["seq"] for entry in log.misses] == [2]
