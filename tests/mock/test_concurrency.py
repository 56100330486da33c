"""State under concurrent clients, over HTTP: 50 requests at once on a 50-turn script take each turn exactly
once (through the proxy and on the base URL alike), and interleaved sessions each see their own turn order."""

import json
import ssl
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anthropic
import pytest

from llmproxy.session import Listening, Session, mocking

TURNS = 50


def start(tmp_path: Path, expectations: dict[str, object]) -> Iterator[Session]:
    path = tmp_path / "expectations.json"
    path.write_text(json.dumps(expectations))
    with mocking(path, Listening(ca_directory=tmp_path / "ca")) as session:
        yield session


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[Session]:
    turns = [{"type": "assistant", "text": f"turn {i}"} for i in range(TURNS)]
    yield from start(tmp_path, {"expectations": [{"script": {"turns": turns, "on_exhausted": "error"}}]})


def client(proxy: Session, door: str) -> anthropic.Anthropic:
    if door == "base URL":
        return anthropic.Anthropic(api_key="k", base_url=proxy.base_url, max_retries=0)
    trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
    http = anthropic.DefaultHttpxClient(proxy=proxy.url, verify=trust)
    return anthropic.Anthropic(api_key="k", http_client=http, max_retries=0)


def ask(claude: anthropic.Anthropic, words: str, session: str = "") -> str:
    headers = {"x-session": session} if session else {}
    answer = claude.messages.create(
        model="claude-haiku-4-5",
        max_tokens=16,
        messages=[{"role": "user", "content": words}],
        extra_headers=headers,
    )
    return "".join(block.text for block in answer.content if block.type == "text")


@pytest.mark.parametrize("door", ["proxy", "base URL"])
def test_fifty_concurrent_requests_take_each_script_turn_exactly_once(scripted: Session, door: str) -> None:
    with client(scripted, door) as claude, ThreadPoolExecutor(TURNS) as pool:
        texts = list(pool.map(lambda i: ask(claude, f"request {i}"), range(TURNS)))
        assert sorted(texts) == sorted(f"turn {i}" for i in range(TURNS))
        with pytest.raises(anthropic.InternalServerError, match="the script's 50 turns are exhausted"):
            ask(claude, "one more")
    assert scripted.mock_log is not None
    served = [entry["answeredBy"] for entry in scripted.mock_log.entries[:TURNS]]
    assert served == [f"expectation 1 script turn {i}" for i in range(1, TURNS + 1)]  # in arrival order


def test_interleaved_sessions_each_see_their_own_turn_order(tmp_path: Path) -> None:
    turns = [{"respond": {"text": f"step {i}"}} for i in range(1, 4)]
    conversation = {"conversation": {"isolateBy": {"source": "header", "name": "x-session"}, "turns": turns}}
    for proxy in start(tmp_path, {"expectations": [conversation]}):
        with client(proxy, "proxy") as claude:
            order = ["alice", "bob", "bob", "alice", "carol", "bob", "alice"]
            seen = [(who, ask(claude, "next", session=who)) for who in order]
    assert [text for who, text in seen if who == "alice"] == ["step 1", "step 2", "step 3"]
    assert [text for who, text in seen if who == "bob"] == ["step 1", "step 2", "step 3"]
    assert [text for who, text in seen if who == "carol"] == ["step 1"]
