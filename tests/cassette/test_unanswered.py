"""What a recording leaves out: a request the upstream never answered whole is named, not recorded (unless
asked), and a recording of nothing but an outage leaves the cassette as it was."""

from dataclasses import replace
from pathlib import Path

import pytest

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter, load_cassette
from llmproxy.cassette.unanswered import reason
from tests.cassette.factory import exchange, request, response
from tests.cassette.test_store import record, streamed

REFUSED = exchange(request({"model": "m", "messages": [{"role": "user", "content": "x"}]}), None, "connection refused")


def test_a_request_the_upstream_never_answered_is_named_not_recorded(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    fault = {"kind": "drop", "rule": "--fail", "detail": "the connection closed"}
    dropped = replace(REFUSED, error="connection closed without an answer (injected)", injected=(fault,))
    cut = exchange(REFUSED.request, response(events=()), "HTTP/1 protocol error: peer closed connection")
    summary = record(path, REFUSED, streamed("answered"), REFUSED, dropped, cut)
    assert summary.splitlines()[:4] == [
        f"recorded 2 exchanges to {path} (anthropic 2; 1 streamed, 1 not; 1 failed)",
        "not recorded: 3 requests the upstream never answered (--record-unanswered records them):",
        "  POST https://api.anthropic.com/v1/messages: connection refused (2 times)",
        "  POST https://api.anthropic.com/v1/messages: the answer broke off: the upstream closed the connection",
    ]
    stored = load_cassette(path).exchanges
    assert [(e.id, e.error) for e in stored] == [(1, None), (2, dropped.error)]  # the injected fault stays


@pytest.mark.parametrize("existing", [False, True])
def test_a_recording_of_nothing_but_an_outage_leaves_the_cassette_as_it_was(tmp_path: Path, existing: bool) -> None:
    path = tmp_path / "c.json"
    if existing:
        record(path, streamed("old"))
    before = path.read_bytes() if existing else None
    writer = CassetteWriter.open(path, Redactor(), rewrite=True)
    writer.start()
    writer.add(REFUSED)
    summary = writer.close()
    assert summary.unreachable
    fate = "is as it was" if existing else "is not written"
    assert str(summary).splitlines()[0] == (
        f"recorded nothing to {path}: the upstream answered none of 1 request; {path} {fate}"
    )
    assert (path.read_bytes() if existing else None) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == (["c.json"] if existing else [])


@pytest.mark.parametrize(
    ("error", "words"),
    [  # as mitmproxy and the OS report them
        ("[Errno 111] Connect call failed ('127.0.0.1', 40123)", "connection refused"),
        ("[Errno -2] Name or service not known", "the host name does not resolve"),
        ("[Errno -3] Temporary failure in name resolution", "the host name does not resolve"),
        ("[Errno 104] Connection reset by peer", "connection reset"),
        ("server closed connection", "the upstream closed the connection"),
        ("Client disconnected.", "the client stopped waiting"),
        ("the connection ended before the answer did: Client disconnected.", "the client stopped waiting"),
        ("TimeoutError: timed out", "timed out"),
        ("Certificate verify failed: unable to get local issuer certificate", "the TLS handshake failed"),
        ("something new", "something new"),
    ],
)
def test_why_in_a_few_words(error: str, words: str) -> None:
    assert reason(error) == words
