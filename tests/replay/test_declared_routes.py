"""A private gateway declared with `routes=` (the Python API) and `--route` (the CLI) in every mode: its own
path is the API it speaks, so record names it, replay matches it offline and the mock answers it — and
without the declaration, replay and the mock do not take it for an LLM API."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from llmproxy.cassette.store import load_cassette
from llmproxy.session import Listening, Session, mocking, recording, replaying
from tests.mock.sdk_clients import trusting

ROUTE = "llm.corp.example/llm=openai-chat@corp"
URL = "https://llm.corp.example/llm/generate"
ASKED = {"model": "corp-large", "messages": [{"role": "user", "content": "Say hi to the gateway"}]}
ANSWER = "Hi from the declared gateway."
EXPECTATIONS = {"expectations": [{"match": {"latestMessageContains": "gateway"}, "respond": {"text": ANSWER}}]}
# the child llmproxy runs: it knows only the proxy and CA variables llmproxy injects
CHILD = (
    "import httpx, json, sys; "
    f"r = httpx.post({URL!r}, json={ASKED!r}, timeout=30); "
    "print(json.dumps({'status': r.status_code, 'body': r.text}))"
)


def _ask(proxy: Session) -> httpx.Response:
    with httpx.Client(proxy=proxy.url, verify=trusting(proxy), timeout=30) as client:
        return client.post(URL, json=ASKED)


def _text(body: str) -> Any:
    return json.loads(body)["choices"][0]["message"]["content"]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Expectations, and a cassette recorded through `routes=` against the mock as the gateway's upstream."""
    tmp = tmp_path_factory.mktemp("routes")
    (tmp / "expectations.json").write_text(json.dumps(EXPECTATIONS))
    upstream_route = "127.0.0.1/llm=openai-chat"  # the mapped request reaches the upstream by its address
    with mocking(tmp / "expectations.json", Listening(ca_directory=tmp / "ca-up"), routes=[upstream_route]) as upstream:
        mapped = Listening(mapping={"llm.corp.example": upstream.base_url}, ca_directory=tmp / "ca")
        with recording(tmp / "gateway.json", mapped, routes=[ROUTE]) as proxy:
            assert _text(_ask(proxy).text) == ANSWER
    return tmp


def test_record_names_the_declared_api(files: Path) -> None:
    (exchange,) = load_cassette(files / "gateway.json").exchanges
    assert (exchange.provider, exchange.operation, exchange.vendor, exchange.model) == (
        "openai",
        "chat_completions",
        "corp",
        "corp-large",
    )


def test_python_api_mock_and_replay_take_routes(files: Path) -> None:
    with mocking(files / "expectations.json", Listening(ca_directory=files / "ca"), routes=[ROUTE]) as mock:
        assert _text(_ask(mock).text) == ANSWER
    with replaying(files / "gateway.json", listening=Listening(ca_directory=files / "ca"), routes=[ROUTE]) as proxy:
        assert _text(_ask(proxy).text) == ANSWER
        assert proxy.misses == []


def test_without_the_route_the_mock_does_not_answer(files: Path) -> None:
    with mocking(files / "expectations.json", Listening(ca_directory=files / "ca")) as mock:
        response = _ask(mock)
    assert response.status_code >= 400  # not an LLM API to the mock: refused, never answered from a turn


@pytest.mark.parametrize("mode", ["mock", "replay"])
def test_cli_route_in_replay_and_mock(files: Path, mode: str) -> None:
    source = {"mock": ["--expectations", "expectations.json"], "replay": ["--cassette", "gateway.json"]}[mode]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(files), "LLMPROXY_HOME": str(files / "home")}
    run = subprocess.run(
        [sys.executable, "-m", "llmproxy", mode, *source, "--route", ROUTE, "--", sys.executable, "-c", CHILD],
        cwd=files,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    shown = json.loads(run.stdout)
    assert shown["status"] == 200, shown
    assert _text(shown["body"]) == ANSWER
    assert "openai corp-large" in run.stderr or "replayed 1" in run.stderr, run.stderr
