"""An answer llmproxy's codecs cannot read costs the user nothing: it is recorded and replayed byte for byte,
counted per API in the end-of-run summary (with the JSON path and the start of what did not decode), and
`cassette check --decode` lists it."""

import json
from pathlib import Path

import httpx2 as httpx
from click.testing import CliRunner

from llmproxy.cli import main
from llmproxy.session import Listening, recording, replaying
from tests.conformance.server import LoopbackServer, Reply

REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
# a `content` no OpenAI-compatible server sends: the decoder names the path
ANSWER = b'{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":42}}]}'
GOOD = b'{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}'


def test_an_undecodable_answer_is_recorded_replayed_and_counted(tmp_path: Path, loopback: LoopbackServer) -> None:
    listening = Listening(ca_directory=tmp_path / "ca")
    cassette = tmp_path / "c.json"
    json_type = {"content-type": "application/json"}
    loopback.queue(Reply(200, json_type, ANSWER), Reply(200, json_type, GOOD))
    url = f"{loopback.url}/v1/chat/completions"
    with recording(cassette, listening) as proxy:
        first = httpx.post(url, json=REQUEST, proxy=proxy.url)
        second = httpx.post(url, json={**REQUEST, "model": "n"}, proxy=proxy.url)
    assert (first.content, second.content) == (ANSWER, GOOD)
    expected = [
        "1 of 2 exchanges did not decode (recorded and served as they came): openai chat_completions 1",
        "  not decoded: exchange 1: openai chat_completions response: openai chat response: "
        f"$.choices[0].message.content: expected a string or a list of content parts, got 42: {ANSWER.decode()!r}",
    ]
    assert proxy.summary.splitlines()[1:] == expected

    checked = CliRunner().invoke(main, ["cassette", "check", "--decode", str(cassette)])
    assert checked.exit_code == 1
    assert checked.stdout.splitlines()[0] == (
        f"{cassette}: exchange 1: openai chat_completions response: openai chat response: "
        f"$.choices[0].message.content: expected a string or a list of content parts, got 42: {ANSWER.decode()!r}"
    )
    assert "1 exchange that llmproxy cannot decode" in checked.stderr
    assert CliRunner().invoke(main, ["cassette", "check", str(cassette)]).exit_code == 0  # no secrets: clean

    with replaying(cassette, listening=listening, timing=None) as proxy:
        replayed = httpx.post(url, json=REQUEST, proxy=proxy.url)
    assert replayed.content == ANSWER
    assert replayed.headers["content-type"] == "application/json"
    served = expected[0].replace("1 of 2 exchanges", "1 of 1 exchange")  # the other recording was not asked for
    assert proxy.summary.splitlines()[2:] == [served, expected[1]]


def test_check_decode_passes_a_cassette_that_decodes(tmp_path: Path) -> None:
    cassette = Path(__file__).parents[2] / "cassettes" / "quickstart.json"
    checked = CliRunner().invoke(main, ["cassette", "check", "--decode", str(cassette)])
    assert (checked.exit_code, checked.stdout) == (0, "")
    assert json.loads(cassette.read_text())["exchanges"]
