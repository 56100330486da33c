"""Arize Phoenix, an OTLP backend that understands GenAI spans, started on 127.0.0.1 as docs/telemetry.md sets
it up: the README's replay exports its span to Phoenix, and Phoenix's REST API gives it back with its usage,
read as Phoenix reads GenAI attributes (`llm.token_count.*`).

Phoenix is not installed by the project (`pip install arize-phoenix` is some 150 packages and 800 MB, minutes
to install: too much for CI). The test runs where it is: the `phoenix` command on PATH, or named by
`LLMPROXY_PHOENIX`."""

import json
import os
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anthropic
import pytest

from llmproxy.plan import replay_plan
from llmproxy.session import Listening, Session, running
from llmproxy.telemetry.settings import TelemetryPlan
from tests.mock.sdk_clients import trusting
from tests.telemetry.backends import free_port

pytestmark = pytest.mark.service

REPOSITORY = Path(__file__).resolve().parents[2]
QUICKSTART = REPOSITORY / "cassettes" / "quickstart.json"
PHOENIX = os.environ.get("LLMPROXY_PHOENIX") or shutil.which("phoenix")
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(url: str) -> Any:
    with DIRECT.open(url, timeout=10) as answer:
        return json.load(answer)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if PHOENIX is None:
        pytest.skip("Arize Phoenix is not installed (pip install arize-phoenix; or LLMPROXY_PHOENIX=its phoenix)")
    directory = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    environment = os.environ | {
        "PHOENIX_WORKING_DIR": str(directory),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (directory / "phoenix.log").open("w")
    process = subprocess.Popen([PHOENIX, "serve"], env=environment, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300  # its first start migrates its database
        while True:
            try:
                with DIRECT.open(f"{url}/healthz", timeout=2) as ready:
                    if ready.status == 200:
                        break
            except OSError:
                pass
            assert process.poll() is None, (directory / "phoenix.log").read_text()
            assert time.monotonic() < deadline, "Phoenix did not start"
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)
        log.close()


def test_a_replays_span_reaches_phoenix_with_its_usage(
    phoenix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")  # Phoenix takes spans only
    telemetry = TelemetryPlan(export=True, endpoint=phoenix)
    plan = replace(replay_plan([QUICKSTART], timing=None), telemetry=telemetry)
    with running(Session.of(plan), Listening(ca_directory=tmp_path / "ca")) as proxy:
        http = anthropic.DefaultHttpxClient(proxy=proxy.url, verify=trusting(proxy))
        with anthropic.Anthropic(api_key="k", http_client=http, max_retries=0) as client:
            question = "In two sentences: what does an LLM traffic recorder let me do in CI?"
            with client.messages.stream(
                model="claude-haiku-4-5", max_tokens=200, messages=[{"role": "user", "content": question}]
            ) as stream:
                stream.get_final_text()
    deadline = time.monotonic() + 60
    spans: list[dict[str, Any]] = []
    while not spans and time.monotonic() < deadline:
        spans = get(f"{phoenix}/v1/projects/default/spans?limit=10")["data"]
        time.sleep(0.5)
    (span,) = spans
    attributes = span["attributes"]
    assert span["name"] == "chat claude-haiku-4-5"
    assert span["span_kind"] == "LLM"  # Phoenix took it for a model's call
    assert attributes["gen_ai.usage.input_tokens"] == attributes["llm.token_count.prompt"] == 21
    assert attributes["gen_ai.usage.output_tokens"] == attributes["llm.token_count.completion"] == 46
    assert attributes["llm.model_name"] == "claude-haiku-4-5"
    assert attributes["llmproxy.source"] == "replayed"
