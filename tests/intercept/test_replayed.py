"""Chaos on replayed traffic: the committed quickstart cassette served under injected faults, through the
proxy and a reverse listener; the same seed gives the same faults as on mocked answers through the relay
(the draw depends on the requests, not on what answers them); a refused request never uses up a recording,
so the SDK's retry gets it."""

import json
import ssl
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx

from llmproxy.cassette.model import JsonBody
from llmproxy.cassette.replay_index import MatchOptions, OnExhausted
from llmproxy.cassette.store import load_cassette
from llmproxy.intercept.profile import ChaosProfile
from llmproxy.intercept.rules import ChaosFile, Rule
from llmproxy.plan import InterceptPlan
from llmproxy.session import Listening, Session, mocking, replaying

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "cassettes" / "quickstart.json"
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


def test_the_sdk_retries_two_injected_529s_into_the_recording(tmp_path: Path) -> None:
    """…and the run says so: the summary, and under --debug each fault as it is injected, with its rule."""
    run = subprocess.run(
        [
            *(sys.executable, "-m", "llmproxy", "replay", "--debug", "--cassette", str(QUICKSTART)),
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
    injected = [line for line in run.stderr.splitlines() if "injected error" in line]
    rule = "--fail 529@1 --fail-first 2 --retry-after 0.1"
    assert injected == [f"llmproxy: DEBUG llmproxy.intercept.engine: injected error: status 529 ({rule})"] * 2
