"""llmproxy inside a user's own mitmproxy: `mitmdump -s "$(llmproxy addon-path)"` records and replays with
llmproxy's chain, as docs/mitmproxy.md says — the real mitmdump, a real upstream on 127.0.0.1."""

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2 as httpx

from llmproxy.cassette.store import load_cassette
from llmproxy_addons.proxy import free_port
from tests.conformance.server import LoopbackServer, Reply

BIN = Path(sys.executable).parent
BODY = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "Hello?"}]}
ANSWER = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "Hi from upstream."}]}


def addon_path() -> str:
    done = subprocess.run([str(BIN / "llmproxy"), "addon-path"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@contextmanager
def mitmdump(tmp: Path, *settings: str) -> Iterator[tuple[str, list[str]]]:
    """mitmdump with llmproxy's script and `settings` (``name=value``), on a free port; yields its proxy URL
    and, once it has stopped (Ctrl-C), what it logged."""
    port = free_port()
    argv = [str(BIN / "mitmdump"), "-s", addon_path(), "--listen-host", "127.0.0.1", "-p", str(port)]
    argv += ["--set", f"confdir={tmp / 'mitmproxy'}", "--set", "flow_detail=0"]
    for setting in settings:
        argv += ["--set", setting]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    logged: list[str] = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, process.communicate()[0]
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", logged
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
        logged.append(output)


def test_addon_path_names_the_script_of_the_installed_adapters() -> None:
    path = Path(addon_path())
    assert path.name == "script.py"
    assert path.parent.name == "llmproxy_addons"
    assert "addons = [Llmproxy()]" in path.read_text()


def test_mitmdump_records_then_replays_with_llmproxys_chain(tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    with LoopbackServer() as upstream:
        upstream.queue(Reply(200, {"content-type": "application/json"}, json.dumps(ANSWER).encode()))
        with mitmdump(tmp_path, f"llmproxy_record={cassette}") as (proxy, logged):
            recorded = httpx.post(f"{upstream.url}/v1/messages", json=BODY, proxy=proxy, timeout=10)
        assert recorded.json() == ANSWER
    assert "recorded 1 exchange" in logged[0]
    (exchange,) = load_cassette(cassette).exchanges
    assert (exchange.provider, exchange.request.url) == ("anthropic", f"{upstream.url}/v1/messages")

    # the upstream is gone: only the cassette can answer now
    with mitmdump(tmp_path, f"llmproxy_replay={cassette}", "llmproxy_timing=instant") as (proxy, logged):
        replayed = httpx.post(f"{upstream.url}/v1/messages", json=BODY, proxy=proxy, timeout=10)
        missed = httpx.post(f"{upstream.url}/v1/messages", json={**BODY, "model": "other"}, proxy=proxy, timeout=10)
    assert replayed.json() == ANSWER
    assert (missed.status_code, missed.headers["x-should-retry"]) == (400, "false")  # a client stops at once
    assert "$.model" in missed.text
    assert "replayed 1 request: 1 missed, 0 unused" in logged[0]


def test_a_bad_option_is_refused_with_what_is_wrong(tmp_path: Path) -> None:
    argv = [str(BIN / "mitmdump"), "-s", addon_path(), "-p", str(free_port()), "--listen-host", "127.0.0.1"]
    argv += ["--set", f"confdir={tmp_path}", "--set", "llmproxy_replay=missing.json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "no such cassette: missing.json" in done.stdout + done.stderr
