"""`llmproxy mock` answers every request on purpose. A request an expectation cannot answer in its format —
`GET /v1/models`, Gemini's model list, a telemetry upload, a host that is no LLM API — matched by a
catch-all is a counted miss: the provider's error shape (or a plain JSON error), named with its reason in the
summary, and the run fails. Never a 500 and a traceback. Replay's summary keeps the paths that differ."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT = r"""
import json, sys, urllib.error, urllib.request
results = []
for method, url, body in json.loads(sys.argv[1]):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            results.append([response.status, response.headers["content-type"], response.read().decode()])
    except urllib.error.HTTPError as error:
        results.append([error.code, error.headers["content-type"], error.read().decode()])
print(json.dumps(results))
"""

CHAT = {"model": "claude-haiku-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
REQUESTS = [
    ("POST", "http://api.anthropic.com/v1/messages", CHAT),  # the one the catch-all can answer
    ("GET", "http://api.anthropic.com/v1/models", None),
    ("GET", "http://generativelanguage.googleapis.com/v1beta/models", None),
    ("POST", "http://api.anthropic.com/api/event_logging/batch", {"events": []}),  # telemetry
    ("POST", "http://telemetry.example/v1/upload", {"events": []}),  # no LLM API at all
    ("POST", "http://api.openai.com/v1/embeddings", {"model": "text-embedding-3-small", "input": "x"}),
]


def run_mock(tmp_path: Path, expectations: list[dict[str, object]]) -> tuple[subprocess.CompletedProcess[str], list]:
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"expectations": expectations}))
    done = subprocess.run(
        [
            *(sys.executable, "-m", "llmproxy", "mock", "--expectations", str(path)),
            *("--log", str(tmp_path / "log.jsonl"), "--", sys.executable, "-c", CLIENT, json.dumps(REQUESTS)),
        ],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "ca")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, json.loads(done.stdout) if done.stdout.strip() else []


@pytest.mark.parametrize(
    "catch_all",
    [{"respond": {"text": "hello"}}, {"conversation": {"turns": [{"respond": {"text": "hello"}}] * 3}}],
    ids=["expectation", "conversation"],
)
def test_a_catch_all_chat_answer_misses_what_is_not_chat(tmp_path: Path, catch_all: dict[str, object]) -> None:
    done, results = run_mock(tmp_path, [catch_all])
    assert "Traceback" not in done.stderr
    assert done.returncode == 1, done.stderr
    statuses = [status for status, _, _ in results]
    # the API's invalid-request error; Claude Code's telemetry (background traffic: docs/replay.md) answered
    # harmlessly; not found off the LLM APIs
    assert statuses == [200, 400, 400, 200, 404, 400]
    assert results[3][2] == "{}"
    assert "answered 1 background requests harmlessly: Claude Code telemetry" in done.stderr
    for _, content_type, body in [*results[1:3], *results[4:]]:
        assert content_type.startswith("application/json")
        assert "cannot answer" in body
    assert json.loads(results[4][2])["error"]["type"] == "not_found_error"  # not an LLM API: a plain JSON error
    assert json.loads(results[1][2])["error"]["type"] == "invalid_request_error"  # Anthropic's error shape
    assert json.loads(results[2][2])["error"]["status"] == "INVALID_ARGUMENT"  # Gemini's: the host names it
    # the telemetry the background stage answered is no miss of the mock's: it says what answered it
    assert "mock answered 1 of 6 requests; 1 more answered after it (background)" in done.stderr
    summary = done.stderr[done.stderr.index("mock answered") :]
    assert "4. POST api.anthropic.com/api/event_logging/batch (turn index -): background" in summary
    assert "2. GET api.anthropic.com/v1/models (turn index -): missed:" in summary
    assert "a chat answer cannot answer anthropic list_models" in summary
    assert "3. GET generativelanguage.googleapis.com/v1beta/models (turn index -): missed:" in summary
    assert "a chat answer cannot answer gemini list_models" in summary
    assert "5. POST telemetry.example/v1/upload (turn index -): missed:" in summary
    logged = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [("miss" in entry) for entry in logged] == [False, True, True, False, True, True]
    assert logged[3]["answeredBy"] == "background"
    assert [entry.get("provider") for entry in logged[:3]] == ["anthropic", "anthropic", "gemini"]


def test_answers_that_fit_answer_them(tmp_path: Path) -> None:
    expectations = [
        {"match": {"path": "/v1/models"}, "http": {"json": {"data": []}}},
        {"match": {"host": "generativelanguage.googleapis.com"}, "http": {"json": {"models": []}}},
        {"match": {"path": "^/api/"}, "http": {"status": 204}},
        {"match": {"host": "telemetry.example"}, "error": {"status": 404, "message": "no telemetry here"}},
        {"embedding": {"dimensions": 4}},
        {"respond": {"text": "hello"}},
    ]
    done, results = run_mock(tmp_path, expectations)
    assert [status for status, _, _ in results] == [200, 200, 200, 204, 404, 200], done.stderr
    assert done.returncode == 0  # the telemetry host got the scripted 404: an answer, not a miss
    assert "mock answered 6 of 6 requests" in done.stderr
