"""What `record`, `replay` and `mock` print as users run them: `--json` (one document on stdout, the
command's own output moved to stderr), `-v` (a line per request as it is answered) and `--live` (a table
drawn on a real terminal, the command's output passed through above it, the summary in a panel)."""

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "json" / "run.schema.json").read_text())
QUICKSTART = [sys.executable, str(ROOT / "scripts" / "quickstart.py")]
CASSETTE = str(ROOT / "cassettes" / "quickstart.json")
OTHER = """
import os, ssl, httpx2 as httpx
trust = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
body = {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "Not recorded"}]}
with httpx.Client(proxy=os.environ["HTTPS_PROXY"], verify=trust) as client:
    print(client.post("https://api.anthropic.com/v1/messages", json=body).status_code)
"""


def environment(tmp_path: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "ca")}


def llmproxy(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *arguments],
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def document(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    parsed = json.loads(done.stdout)  # stdout holds the document and nothing else
    jsonschema.validate(parsed, SCHEMA)
    return parsed


def test_replay_json_is_one_document_with_every_call(tmp_path: Path) -> None:
    done = llmproxy(tmp_path, "replay", "--cassette", CASSETTE, "--timing", "instant", "--json", "--", *QUICKSTART)
    assert done.returncode == 0, done.stderr
    run = document(done)
    assert (run["command"], run["exitStatus"], run["commandExitStatus"]) == ("replay", 0, 0)
    assert "replayed 1 request: 0 missed, 0 unused" in run["summary"]
    (call,) = run["calls"]
    assert (call["answered"], call["status"], call["provider"], call["streamed"]) == ("hit", 200, "anthropic", True)
    assert call["inputTokens"] > 0
    assert call["costUsd"] is not None
    assert run["totals"]["calls"] == 1
    assert "replay them offline in CI" in done.stderr  # the client's own answer, moved to stderr


def test_a_miss_is_in_the_document_and_fails_the_run(tmp_path: Path) -> None:
    client = tmp_path / "other.py"
    client.write_text(OTHER)
    done = llmproxy(tmp_path, "replay", "--cassette", CASSETTE, "--json", "--", sys.executable, str(client))
    assert done.returncode == 1
    run = document(done)
    assert (run["exitStatus"], run["commandExitStatus"]) == (1, 0)
    (miss,) = run["misses"]
    assert (miss["request"], miss["reason"]) == ("POST https://api.anthropic.com/v1/messages", "differs")
    assert (miss["cassette"], miss["closestExchange"]) == (CASSETTE, 1)
    assert {"path": "$.max_tokens", "recorded": "200", "received": "10"} in miss["differences"]
    assert miss["message"].startswith("POST https://api.anthropic.com/v1/messages: no recorded exchange matches")
    assert run["calls"][0]["answered"] == "miss"
    assert run["unused"] == [{"id": 1, "method": "POST", "url": "https://api.anthropic.com/v1/messages"}]


def test_misses_become_ci_annotations_as_docs_json_output_shows(tmp_path: Path) -> None:
    """docs/json-output.md's jq program, run on a replay's document: one `::error` line per path that differs,
    on the cassette that came closest."""
    client = tmp_path / "other.py"
    client.write_text(OTHER)
    done = llmproxy(tmp_path, "replay", "--json", "--cassette", CASSETTE, "--", sys.executable, str(client))
    (tmp_path / "run.json").write_text(done.stdout)
    page = (ROOT / "docs" / "json-output.md").read_text()
    program = re.search(r"jq -r '(.*?)' run\.json", page, re.DOTALL)
    assert program is not None
    annotated = subprocess.run(
        ["jq", "-r", program.group(1), "run.json"], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    lines = annotated.stdout.splitlines()
    assert f"::error file={CASSETTE},title=llmproxy replay miss::$.max_tokens: recorded 200, received 10" in lines
    assert all(line.startswith(f"::error file={CASSETTE},title=llmproxy replay miss::") for line in lines)


def test_verbose_says_each_request_as_it_is_answered(tmp_path: Path) -> None:
    done = llmproxy(tmp_path, "replay", "--cassette", CASSETTE, "--timing", "instant", "-v", "--", *QUICKSTART)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("llmproxy replay: #1 ")]
    assert "#1 hit 200 anthropic claude-haiku-4-5" in line
    assert line.endswith("POST https://api.anthropic.com/v1/messages")


def test_mock_json_counts_the_mocked_calls(tmp_path: Path) -> None:
    expectations = tmp_path / "e.json"
    expectations.write_text(json.dumps({"expectations": [{"respond": {"text": "Tests, offline."}}]}))
    done = llmproxy(tmp_path, "mock", "--expectations", str(expectations), "--json", "--", *QUICKSTART)
    assert done.returncode == 0, done.stderr
    run = document(done)
    assert [call["answered"] for call in run["calls"]] == ["mock"]
    assert run["summary"][0] == "mock answered 1 of 1 request"


def test_live_on_a_terminal_draws_the_calls_and_passes_the_output_through(tmp_path: Path) -> None:
    """stderr is a real pseudo-terminal: what a user at a terminal sees."""
    primary, secondary = pty.openpty()
    command = [sys.executable, "-m", "llmproxy", "replay", "--cassette", CASSETTE, "--timing", "instant", "--live"]
    child = subprocess.Popen(
        [*command, "--", *QUICKSTART],
        env={**environment(tmp_path), "COLUMNS": "140", "LINES": "40"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=secondary,
    )
    os.close(secondary)
    shown = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(primary, 65536)
        except OSError:  # the terminal closed: the child has exited
            break
        if not data:
            break
        shown += data
    assert child.wait(timeout=60) == 0
    os.close(primary)
    text = shown.decode("utf-8", "replace")
    assert "provider" in text
    assert "cost so far" in text  # the table's header
    assert "anthropic" in text
    assert "claude-haiku-4-5" in text
    assert "replay them offline" in text  # the client's output, printed above the table
    assert "llmproxy replay" in text
    assert "1 call (1 hit)" in text  # the summary panel
