"""The runtime control surface: a running replay session switches cassettes from the Python API, without a
restart (what the pytest plugin does between two tests). A request sees the old cassette or the new one,
never a mix; a bad cassette changes nothing."""

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2 as httpx
import pytest

from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.errors import CassetteError
from llmproxy.model.exchange import RawExchange, RawResponse
from llmproxy.session import Listening, replaying
from tests.cassette import factory
from tests.cassette.factory import STARTED

URL = "http://api.anthropic.com/v1/messages"
BODY = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "Which cassette?"}]}


def cassette(path: Path, text: str, copies: int = 1) -> Path:
    writer = CassetteWriter.open(path, Redactor())
    request = factory.request(json.dumps(BODY).encode(), scheme="http", headers=(("content-type", "application/json"),))
    answer = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}
    response = RawResponse(
        200, "OK", "HTTP/1.1", (("content-type", "application/json"),), json.dumps(answer).encode(), None, None
    )
    for _ in range(copies):
        writer.add(RawExchange(request, response, None, STARTED, 1.0, 2.0))
    writer.close()
    return path


def asked(client: httpx.Client) -> str:
    response = client.post(URL, json=BODY)
    assert response.status_code == 200, response.text
    return str(response.json()["content"][0]["text"])


def test_a_running_replay_switches_cassettes(tmp_path: Path) -> None:
    first, second = cassette(tmp_path / "a.json", "from a"), cassette(tmp_path / "b.json", "from b")
    listening = Listening(ca_directory=tmp_path / "ca")
    with replaying(first, listening=listening, timing=None) as proxy, httpx.Client(proxy=proxy.url) as client:
        assert asked(client) == "from a"
        served = proxy.use_cassettes(second)
        assert asked(client) == "from b"
        assert client.post(URL, json=BODY).status_code == 400  # b's one recording is used up
    assert (served.hits, served.misses, served.index.unused()) == (1, [], [])
    assert served.sources == (first,)
    assert len(proxy.misses) == 1  # b's report: what the session's summary gives
    assert "replayed 1 request: 1 missed, 0 unused" in proxy.summary


def test_a_bad_cassette_is_refused_and_the_old_one_serves_on(tmp_path: Path) -> None:
    first = cassette(tmp_path / "a.json", "from a", copies=2)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with replaying(first, listening=Listening(ca_directory=tmp_path / "ca"), timing=None) as proxy:
        with pytest.raises(CassetteError, match=r"broken\.json"):
            proxy.use_cassettes(broken)
        with httpx.Client(proxy=proxy.url, timeout=10) as client:
            assert asked(client) == "from a"


def test_requests_in_flight_while_cassettes_switch_see_one_or_the_other(tmp_path: Path) -> None:
    first = cassette(tmp_path / "a.json", "from a", copies=200)
    second = cassette(tmp_path / "b.json", "from b", copies=200)
    listening = Listening(ca_directory=tmp_path / "ca")
    with (
        replaying(first, listening=listening, timing=None) as proxy,
        httpx.Client(proxy=proxy.url, timeout=10) as client,
        ThreadPoolExecutor(8) as pool,
    ):
        answers = pool.map(lambda _: asked(client), range(120))
        for turn in range(20):
            proxy.use_cassettes(second if turn % 2 == 0 else first)
        seen = list(answers)
    assert set(seen) <= {"from a", "from b"}
    assert len(seen) == 120
    assert proxy.misses == []
