"""Chaos on replayed traffic: the committed quickstart cassette served under injected faults, through the
proxy and a reverse listener; the same seed gives the same faults as on mocked answers through the relay
(the draw depends on the requests, not on what answers them); a refused request never uses up a recording,
so the SDK's retry gets it.

A cassette recorded under chaos (cassettes/chaos/) holds the faults the client met. Replayed without chaos, they
are served in order, as recorded; replayed with chaos, the live chaos decides which requests fail, and the
recorded faults are passed over — neither served nor counted unused — on either door."""

import json
import re
import shlex
import ssl
import subprocess
import sys
from pathlib import Path

import anthropic
import httpx2 as httpx
import pytest

from llmproxy.cassette.decode import decode_exchange
from llmproxy.cassette.model import JsonBody
from llmproxy.cassette.replay_index import MatchOptions, OnExhausted
from llmproxy.cassette.store import load_cassette
from llmproxy.intercept.aftermath import Next
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import ChaosFile, Rule
from llmproxy.intercept.settings import InterceptPlan
from llmproxy.session import Listening, Session, mocking, replaying

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "cassettes" / "quickstart.json"
RECOVERED = ROOT / "cassettes" / "chaos" / "recovered.json"  # 529, 529 (both injected), then the answer
GAVE_UP = ROOT / "cassettes" / "chaos" / "gave-up.json"  # 529 three times, all injected
HEADERS = {"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-test"}
CHAOS = InterceptPlan(ChaosFile(seed=7, rules=(Rule(chaos=ChaosProfile(errorStatus=500, errorProbability=0.4)),)))


def recorded_request() -> object:
    body = load_cassette(QUICKSTART).exchanges[0].request.body
    assert isinstance(body, JsonBody)
    return body.json_


def statuses(proxy: Session, door: str, count: int = 20) -> list[int]:
    trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
    if door == "proxy":
        client = httpx.Client(proxy=proxy.url, verify=trust, timeout=10, base_url="https://api.anthropic.com")
    else:  # a reverse listener (--reverse https://api.anthropic.com), or the mock's relay (its base URL)
        url = proxy.listeners[1].url if door == "reverse" else proxy.base_url
        client = httpx.Client(timeout=10, base_url=url)
    request = recorded_request()
    with client:
        return [client.post("/v1/messages", json=request, headers=HEADERS).status_code for _ in range(count)]


def test_replayed_answers_meet_the_same_faults_as_mocked_ones_on_both_doors(tmp_path: Path) -> None:
    runs = []
    listening = Listening(ca_directory=tmp_path / "ca", reverse=("https://api.anthropic.com",))
    for door in ("proxy", "reverse"):
        match = MatchOptions(on_exhausted=OnExhausted.REPEAT_LAST)
        with replaying(QUICKSTART, listening=listening, match=match, intercept=CHAOS) as proxy:
            runs.append(statuses(proxy, door))
    expectations = tmp_path / "expectations.json"
    expectations.write_text(json.dumps({"expectations": [{"respond": {"text": "mocked"}}]}))
    with mocking(expectations, Listening(ca_directory=tmp_path / "ca"), intercept=CHAOS) as proxy:
        runs.append(statuses(proxy, "relay"))
    assert runs[0] == runs[1] == runs[2]
    assert set(runs[0]) == {200, 500}


@pytest.mark.parametrize("cassette", [QUICKSTART, RECOVERED], ids=["recorded without chaos", "recorded under it"])
def test_the_sdk_retries_two_injected_529s_into_the_recording(tmp_path: Path, cassette: Path) -> None:
    """…and the run says so: the summary, and under --debug each fault as it is injected, with its rule. A
    cassette recorded under the same chaos replays the same way: its recorded faults are not served on top."""
    run = subprocess.run(
        [
            *(sys.executable, "-m", "llmproxy", "replay", "--debug", "--cassette", str(cassette)),
            *("--fail", "529@1", "--fail-first", "2", "--retry-after", "0.1", "--seed", "3"),
            *("--", sys.executable, str(ROOT / "scripts" / "quickstart.py")),
        ],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "llmproxy")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "record real LLM exchanges once" in run.stdout
    assert "injected 2 faults (error 2), seed 3" in run.stderr
    assert run.stderr.count("retried after") == 2
    assert "the run recovered: 2 of 2 faults retried" in run.stderr
    assert "replayed 1 request: 0 missed, 0 unused" in run.stderr
    injected = [line for line in run.stderr.splitlines() if "injected error" in line]
    rule = "--fail 529@1 --fail-first 2 --retry-after 0.1"
    assert injected == [f"llmproxy replay: DEBUG llmproxy.intercept.engine: injected error: status 529 ({rule})"] * 2


FAIL_FIRST_2 = InterceptPlan(
    ChaosFile(seed=7, rules=(Rule(chaos=ChaosProfile(errorStatus=529, failRequestCount=2, retryAfter="0.05")),))
)


def quickstart_answer(proxy: Session, door: str) -> str:
    """scripts/quickstart.py's request, by the official SDK with its default two retries, through `door`."""
    if door == "proxy":
        http = anthropic.DefaultHttpxClient(
            proxy=proxy.url, verify=ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
        )
        client = anthropic.Anthropic(api_key="sk-ant-test", http_client=http)
    else:
        client = anthropic.Anthropic(api_key="sk-ant-test", base_url=proxy.base_url)
    body = recorded_request()
    assert isinstance(body, dict)
    with (
        client,
        client.messages.stream(model=body["model"], max_tokens=body["max_tokens"], messages=body["messages"]) as stream,
    ):
        return "".join(stream.text_stream)


def recorded_answer() -> str:
    """The answer cassettes/chaos/recovered.json holds, after its two faults."""
    completion = decode_exchange(load_cassette(RECOVERED).exchanges[2]).completion
    assert completion is not None
    return completion.text


@pytest.mark.parametrize("door", ["proxy", "base URL"])
def test_under_chaos_the_live_faults_decide_and_the_recorded_ones_are_passed_over(tmp_path: Path, door: str) -> None:
    listening = Listening(ca_directory=tmp_path / "ca")
    with replaying(RECOVERED, listening=listening, intercept=FAIL_FIRST_2, timing=None) as proxy:
        answer = quickstart_answer(proxy, door)
        assert proxy.intercept is not None
        outcomes = proxy.intercept.aftermath.outcomes
        assert proxy.unused == []
    assert answer == recorded_answer()
    assert [(outcome.next, outcome.recovered) for outcome in outcomes] == [(Next.RETRIED, True)] * 2
    assert "replayed 1 request: 0 missed, 0 unused" in proxy.summary


def documented_replays() -> list[str]:
    """The commands docs/chaos.md gives for replaying cassettes/chaos/recovered.json, without chaos and with it."""
    section = (ROOT / "docs" / "chaos.md").read_text().split("## Replaying a run recorded under chaos")[1]
    found = re.findall(r"`(llmproxy replay --cassette cassettes/chaos/recovered\.json[^`]*)`", section)
    return [" ".join(command.split()) for command in found]


@pytest.mark.parametrize(
    "command", documented_replays(), ids=lambda command: "with chaos" if "--fail" in command else "without chaos"
)
def test_the_documented_replays_serve_the_recorded_faults_only_without_chaos(tmp_path: Path, command: str) -> None:
    words = shlex.split(command.replace(" python ", f" {sys.executable} "))
    run = subprocess.run(
        [sys.executable, "-m", *words],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "llmproxy")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "record real LLM exchanges once" in run.stdout  # the recorded answer
    if "--fail" in words:  # two live faults, then the recorded answer
        assert "the run recovered: 2 of 2 faults retried" in run.stderr
        assert "replayed 1 request: 0 missed, 0 unused" in run.stderr
    else:  # the two recorded 529s, then the answer
        assert "injected" not in run.stderr
        assert "replayed 3 requests: 0 missed, 0 unused" in run.stderr


def test_a_request_recorded_only_as_injected_faults_is_a_miss_that_says_so(tmp_path: Path) -> None:
    listening = Listening(ca_directory=tmp_path / "ca")
    with (
        replaying(GAVE_UP, listening=listening, intercept=FAIL_FIRST_2) as proxy,
        pytest.raises(anthropic.BadRequestError) as raised,
    ):
        quickstart_answer(proxy, "base URL")
    assert "every recorded exchange for this request is a fault llmproxy injected" in raised.value.message
    assert "replayed 0 requests: 1 missed, 0 unused" in proxy.summary
