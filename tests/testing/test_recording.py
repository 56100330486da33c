"""What a test's recording keeps (`llmproxy.testing.recording.AnswersOnly`), with plain exchanges: the upstream's
answers, an answer the chaos shaped on its way; not a fault in the answer's place, and not a request the
upstream never answered, which it names instead (redacted)."""

from dataclasses import replace
from pathlib import Path

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.intercept.faults import FaultKind, Injected
from llmproxy.testing.recording import AnswersOnly
from tests.cassette.factory import ANTHROPIC_KEY, exchange, request, response

BODY = {"model": "claude-x", "messages": [{"role": "user", "content": "hi"}]}


def test_the_upstreams_answers_only(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recording = AnswersOnly(CassetteWriter.open(path, Redactor(), pending=True), Redactor())
    answered = exchange(request(BODY), response())
    stood_in = replace(answered, injected=(Injected(FaultKind.ERROR, "rule 1", "status 529", 529).record(),))
    dropped = replace(
        exchange(request(BODY), None, "connection closed without an answer (injected)"),
        injected=(Injected(FaultKind.DROP, "rule 1", "dropped").record(),),
    )
    cut = replace(  # cut by the chaos as it passed: the client's connection dropped, the answer the upstream's
        exchange(request(BODY), response(), "Client disconnected."),
        injected=(Injected(FaultKind.TRUNCATE, "rule 2", "live stream cut after 1 events").record(),),
    )
    refused = exchange(request(BODY, path=f"/v1/messages?key={ANTHROPIC_KEY}"), None, "Connect call failed")
    for item in (answered, stood_in, dropped, cut, refused):
        recording.put(item)

    assert recording.recorded == 2
    (line,) = recording.unanswered
    assert line.startswith("no answer from the upstream to POST https://api.anthropic.com/v1/messages?key=<redacted:")
    assert line.endswith(" (Connect call failed)")
    assert ANTHROPIC_KEY not in line
    recording.start()
    recording.close()
    kept = load_cassette(path).exchanges
    assert [bool(e.injected) for e in kept] == [False, True]
