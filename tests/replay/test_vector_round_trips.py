"""Embeddings and rerank from the official SDKs, recorded and replayed: `llmproxy mock` is the upstream that
`llmproxy record --map` sends the real host names to, over plain HTTP on 127.0.0.1; then, with the mock
stopped, `llmproxy replay` serves the cassette offline and the client prints the same results.

The mock answers most hosts on its base URL. Voyage's paths are OpenAI's and Cohere's, told apart only by
the host, which a base URL loses: Voyage goes to a reverse listener of the mock that keeps the host name.
"""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from llmproxy.cassette.store import load_cassette
from llmproxy.session import Listening, Session, mocking

CLIENTS = Path(__file__).with_name("vector_clients.py")
# client, the host it talks to, and the documents it should get back first (most of the query's words)
CASES = [
    ("openai", "api.openai.com", []),
    ("cohere", "api.cohere.com", [1, 0]),
    ("voyage", "api.voyageai.com", [1, 0]),
    ("ollama", "ollama.com", []),
]
KEEPS_ITS_HOST = ("https://api.voyageai.com",)

EXPECTATIONS = {
    "expectations": [
        {"match": {"provider": "openai"}, "embedding": {"dimensions": 8}},
        {"match": {"provider": "cohere", "path": "/v2/embed"}, "embedding": {"dimensions": 8}},
        {"match": {"provider": "cohere", "path": "/v2/rerank"}, "rerank": {}},
        {"match": {"provider": "voyage", "path": "/v1/embeddings"}, "embedding": {"dimensions": 8}},
        {"match": {"provider": "voyage", "path": "/v1/rerank"}, "rerank": {}},
        {"match": {"provider": "ollama"}, "embedding": {"dimensions": 8}},
    ]
}


@contextmanager
def upstream(tmp: Path) -> Iterator[Session]:
    """`llmproxy mock` in-process: nothing else answers the recording."""
    path = tmp / "expectations.json"
    path.write_text(json.dumps(EXPECTATIONS))
    with mocking(path, Listening(ca_directory=tmp / "mock-ca", reverse=KEEPS_ITS_HOST)) as mock:
        yield mock


def mapped_to(mock: Session, host: str) -> str:
    """Where `--map` sends `host`: the mock's reverse listener for it, else its base URL."""
    return next((listener.url for listener in mock.listeners if listener.target == f"https://{host}"), mock.base_url)


def llmproxy(tmp: Path, *args: str, client: str) -> subprocess.CompletedProcess[str]:
    """`llmproxy ARGS… -- python vector_clients.py CLIENT`, in a bare environment: nothing tells the client
    about the proxy but what llmproxy injects."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp), "LLMPROXY_HOME": str(tmp / "llmproxy")}
    command = [sys.executable, "-m", "llmproxy", *args, "--", sys.executable, str(CLIENTS), client]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("client", "host", "best"), CASES, ids=[client for client, _, _ in CASES])
def test_a_recorded_session_replays_offline_to_the_same_results(
    tmp_path: Path, client: str, host: str, best: list[int]
) -> None:
    cassette = tmp_path / "session.json"
    with upstream(tmp_path) as mock:
        recorded = llmproxy(
            tmp_path, "record", "--cassette", str(cassette), f"--map={host}={mapped_to(mock, host)}", client=client
        )
        assert recorded.returncode == 0, recorded.stderr
        result = json.loads(recorded.stdout)
        assert result["vectors"]
        assert {len(vector) for vector in result["vectors"]} == {8}
        assert [index for index, _ in result["ranked"]] == best
        assert mock.mock_log is not None
        assert [entry["provider"] for entry in mock.mock_log.entries] == [client, client]
        assert not mock.mock_log.misses

    exchanges = load_cassette(cassette).exchanges
    assert [(exchange.provider, urlsplit(exchange.request.url).hostname) for exchange in exchanges] == [
        (client, host)
    ] * 2
    replayed = llmproxy(tmp_path, "replay", "--cassette", str(cassette), client=client)
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout) == result
    assert "replayed 2 requests" in replayed.stderr
    assert "0 missed, 0 unused" in replayed.stderr
