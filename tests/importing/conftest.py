"""Recordings made by the other tools themselves, once per test session: vcrpy (YAML and JSON serializers) around the
official SDKs, and mitmproxy's `mitmdump -w` with its `savehar` addon around the same SDKs, against a local
stand-in API whose Anthropic answers are gzip-encoded (streamed ones too, as one encoded body)."""

import gzip
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conformance.server import Received, Reply
from tests.e2e.clis import ScriptedServer
from tests.importing.sdk_session import session
from tests.record.world import turns

SESSION = Path(__file__).with_name("sdk_session.py")
# shaped like a real Anthropic key, and never a real one
KEY = "sk-ant-api03-" + secrets.token_urlsafe(60)


@dataclass(frozen=True)
class Recording:
    path: Path
    answers: dict[str, str]
    base_url: str  # the stand-in API the recording was made against (stopped by now)


def gzipping(answer: Callable[[Received], Reply]) -> Callable[[Received], Reply]:
    """Anthropic's answers gzip-encoded, a stream as one encoded body."""

    def encoded(received: Received) -> Reply:
        reply = answer(received)
        if not received.path.startswith("/v1/messages") or reply.status != 200:
            return reply
        data = b"".join(reply.events) if reply.events is not None else reply.body
        return Reply(200, {**reply.headers, "content-encoding": "gzip"}, gzip.compress(data))

    return encoded


@pytest.fixture(scope="session")
def stand_in() -> Iterator[ScriptedServer]:
    server = ScriptedServer(turns(12))  # four for each recording
    server.answer = gzipping(server.scripted)
    yield server
    server.close()


@pytest.fixture(scope="session")
def vcrpy_recordings(tmp_path_factory: pytest.TempPathFactory, stand_in: ScriptedServer) -> dict[str, Recording]:
    import vcr

    folder = tmp_path_factory.mktemp("vcrpy")
    made = {}
    for serializer in ("yaml", "json"):
        path = folder / f"test_session.{serializer}"
        # vcrpy's JSON cannot hold binary: its users record the gzip answers decoded (the header dropped)
        recorder = vcr.VCR(serializer=serializer, decode_compressed_response=serializer == "json")
        with recorder.use_cassette(str(path), record_mode="all"):
            answers = session(stand_in.url, KEY)
        made[serializer] = Recording(path, answers, stand_in.url)
    return made


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def mitmproxy_recordings(tmp_path_factory: pytest.TempPathFactory, stand_in: ScriptedServer) -> dict[str, Recording]:
    """`mitmdump -w session.mitm --set hardump=session.har` as a plain proxy between the SDKs and the stand-in."""
    folder = tmp_path_factory.mktemp("mitmproxy")
    port = free_port()
    flows, har = folder / "session.mitm", folder / "session.har"
    mitmdump = str(Path(sys.executable).with_name("mitmdump"))
    options = ["-w", str(flows), "--set", f"hardump={har}"]
    with running_mitmdump(mitmdump, port, folder, *options):  # mitmdump writes the HAR as it shuts down
        answers = session(stand_in.url, KEY, proxy=f"http://127.0.0.1:{port}")
    return {"flows": Recording(flows, answers, stand_in.url), "har": Recording(har, answers, stand_in.url)}


@contextmanager
def running_mitmdump(mitmdump: str, port: int, home: Path, *options: str, timeout: float = 60) -> Iterator[None]:
    """`mitmdump` (any version's) as a plain proxy on 127.0.0.1:`port` with `options`, its CA kept in `home`
    (not the user's), until the block ends; then stopped, and so its files written."""
    args = [mitmdump, "-q", "--listen-host", "127.0.0.1", "-p", str(port), *options]
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    said = process.stderr.read() if process.stderr else b""
                    raise AssertionError(f"mitmdump did not start: {said!r}") from None
                time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


def answers_of(text: str) -> list[dict[str, str]]:
    answers: list[dict[str, str]] = json.loads(text.strip().splitlines()[-1])
    return answers
