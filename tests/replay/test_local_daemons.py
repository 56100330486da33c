"""A coding CLI's own local daemon, reached through the proxy (`HTTP_PROXY` covers 127.0.0.1 for clients that
do not bypass loopback): when llmproxy runs the command, strict replay and mock let it through — it is the
command's own machine, no provider — while an LLM API call there is still answered from the recording. A proxy
serving other processes refuses it with the fix in the message (docs/clis.md#local-daemons)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx
import pytest

from llmproxy.session import Listening, replaying
from tests.conformance.server import LoopbackServer, Reply

DAEMON = r"""
import os, sys, urllib.error, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ["HTTP_PROXY"]}))
for url in sys.argv[1:]:
    try:
        with opener.open(url, timeout=30) as response:
            print(response.status, response.read().decode())
    except urllib.error.HTTPError as error:
        print(error.code, error.read().decode()[:200])
"""


@pytest.fixture
def empty_cassette(tmp_path: Path) -> Path:
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"llmproxy_cassette": 1, "exchanges": []}))
    return path


@pytest.mark.parametrize("mode", ["replay", "mock"])
def test_the_commands_local_daemon_passes_through_and_an_llm_call_there_does_not(
    tmp_path: Path, empty_cassette: Path, mode: str
) -> None:
    with LoopbackServer() as daemon:
        daemon.queue(Reply(200, {"content-type": "text/plain"}, b"daemon says hi"))
        given = ["--cassette", str(empty_cassette)]
        llm_call = f"{daemon.url}/v1/models"  # an LLM API path on this machine: not let out, a miss
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "llmproxy",
                mode,
                *given,
                "--",
                sys.executable,
                "-c",
                DAEMON,
                f"{daemon.url}/status",
                llm_call,
            ],
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "ca")},
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert "Traceback" not in done.stderr
    first, second = done.stdout.splitlines()
    assert first == "200 daemon says hi"
    assert second.startswith("400 ")  # the API's invalid-request error: a miss
    assert [request.path for request in daemon.received] == ["/status"]


def test_a_proxy_serving_other_processes_refuses_it_saying_how_to_let_it_through(
    tmp_path: Path, empty_cassette: Path
) -> None:
    with LoopbackServer() as daemon:
        daemon.queue(Reply(200, {"content-type": "text/plain"}, b"daemon says hi"))
        with (
            replaying(empty_cassette, listening=Listening(ca_directory=tmp_path / "ca"), timing=None) as proxy,
            httpx.Client(proxy=proxy.url) as client,
        ):
            refused = client.get(f"{daemon.url}/status")
        assert daemon.received == []
    assert refused.status_code == 404
    assert f"--allow-host 127.0.0.1:{daemon.port}" in refused.json()["error"]["message"]
    assert "when llmproxy runs the command" in refused.json()["error"]["message"]
