"""`llmproxy mock` from the command line: around a command, the child gets the proxy and CA settings; a
request nothing answers makes llmproxy exit non-zero even when the child succeeds; `--log` writes the
request log redacted; `mock validate` checks a file and points at the offending field."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import CliRunner

from llmproxy.cli import main

DOCS = Path(__file__).resolve().parents[2] / "docs"
SECRET = "sk-ant-api03-" + "Q" * 93
CHILD = """
import json, os, ssl, sys
import httpx2 as httpx

trust = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
body = {"model": "claude-haiku-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": sys.argv[1]}]}
with httpx.Client(proxy=os.environ["HTTPS_PROXY"], verify=trust) as client:
    headers = {"anthropic-version": "2023-06-01"}
    answer = client.post("https://api.anthropic.com/v1/messages", json=body, headers=headers)
print(json.dumps({"status": answer.status_code, "body": answer.json()}))
"""
EXPECTATIONS = {"expectations": [{"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris."}}]}


def mock(tmp_path: Path, prompt: str, *options: str) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    expectations, child = tmp_path / "expectations.json", tmp_path / "child.py"
    expectations.write_text(json.dumps(EXPECTATIONS))
    child.write_text(CHILD)
    command = [sys.executable, "-m", "llmproxy", "mock", "--expectations", str(expectations), *options]
    done = subprocess.run(
        [*command, "--", sys.executable, str(child), prompt],
        env={**os.environ, "LLMPROXY_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, json.loads(done.stdout) if done.stdout.strip() else {}


def test_an_answered_request_exits_zero(tmp_path: Path) -> None:
    done, answer = mock(tmp_path, "What is the capital of France?")
    assert done.returncode == 0, done.stderr
    assert answer["status"] == 200
    assert answer["body"]["content"] == [{"type": "text", "text": "Paris."}]  # type: ignore[index]
    assert "mock answered 1 of 1 request" in done.stderr


def test_an_unanswered_request_gets_the_miss_status_and_fails_the_run(tmp_path: Path) -> None:
    done, answer = mock(tmp_path, "Write a poem")
    assert done.returncode == 1, done.stderr
    assert answer["status"] == 400  # the API's own invalid-request error: no client retries it
    error = answer["body"]["error"]  # type: ignore[index]
    assert error["type"] == "invalid_request_error"
    assert "closest: expectation 1: latestMessageContains" in error["message"]
    assert "closest: expectation 1" in done.stderr


def test_the_log_is_written_and_redacted(tmp_path: Path) -> None:
    log = tmp_path / "mock.jsonl"
    done, _ = mock(tmp_path, f"capital? my key is {SECRET}", "--log", str(log))
    assert done.returncode == 0, done.stderr
    (entry,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert entry["answeredBy"] == "expectation 1"
    assert entry["provider"] == "anthropic"
    assert "my key is <redacted:" in entry["latestText"]
    assert SECRET not in log.read_text()


def test_a_bad_file_stops_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"expectations": [{"respond": {"toolCalls": [{"arguments": {}}]}}]}))
    child = tmp_path / "never.txt"
    done = subprocess.run(
        [sys.executable, "-m", "llmproxy", "mock", "--expectations", str(bad), "--", "touch", str(child)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert f"{bad}: $.expectations[0].respond.toolCalls[0].name: Field required" in done.stderr
    assert not child.exists()


def test_validate_points_at_the_field(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(EXPECTATIONS))
    bad.write_text(json.dumps({"expectations": [{"respond": {"text": "a"}, "error": {"status": 500}}]}))
    runner = CliRunner()
    ok = runner.invoke(main, ["mock", "validate", str(good)])
    assert ok.exit_code == 0
    assert ok.output == f"{good}: valid, 1 expectation\n"
    failed = runner.invoke(main, ["mock", "validate", str(bad)])
    assert failed.exit_code == 1
    assert "$.expectations[0]: needs exactly one of" in failed.output


def validated(path: Path) -> tuple[int, dict[str, Any]]:
    """The exit status and the --json document, checked against its published schema."""
    result = CliRunner().invoke(main, ["mock", "validate", "--json", str(path)])
    document = json.loads(result.stdout)
    jsonschema.validate(document, json.loads((DOCS / "json" / "mock-validate.schema.json").read_text()))
    return result.exit_code, document


def test_validate_json_lists_the_entries_or_the_errors(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    conversation = {"conversation": {"turns": [{"respond": {"text": "a"}}, {"error": {"status": 429}}]}}
    good.write_text(json.dumps({"expectations": [*EXPECTATIONS["expectations"], conversation]}))
    bad.write_text(json.dumps({"expectations": [{"respond": {"text": "a"}, "error": {"status": 500}}]}))
    assert CliRunner().invoke(main, ["mock", "validate", str(good)]).output == (
        f"{good}: valid, 1 expectation, 1 conversation of 2 turns\n"
    )
    assert validated(good) == (
        0,
        {
            "schemaVersion": 1,
            "command": "mock validate",
            "file": str(good),
            "valid": True,
            "errors": [],
            "entries": [
                {"kind": "expectation", "answers": ["respond"]},
                {"kind": "conversation", "answers": ["respond", "error"]},
            ],
            "mcpServers": [],
            "a2aAgents": [],
        },
    )
    code, document = validated(bad)
    assert (code, document["valid"], document["entries"]) == (1, False, [])
    (error,) = document["errors"]
    assert error.startswith(f"{bad}: $.expectations[0]: needs exactly one of")


def test_mock_help_lists_the_options_of_the_mock_itself() -> None:
    shown = CliRunner().invoke(main, ["mock", "--help"], prog_name="llmproxy").output
    assert "llmproxy mock [OPTIONS] [-- CMD ARGS…]" in shown
    for option in ("--expectations FILE", "--cassette FILE", "--miss-status", "--log FILE", "--port", "--map"):
        assert option in shown
    assert "validate  Check an expectations file" in shown


def test_mock_help_lists_no_internal_command() -> None:
    shown = CliRunner().invoke(main, ["mock", "--help"], prog_name="llmproxy").output
    commands = shown.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in commands] == ["validate"]  # not the `run` that serves the mock


def test_without_expectations_the_command_runs_and_chaos_alone_answers(tmp_path: Path) -> None:
    """`llmproxy mock -- CMD` runs CMD; `--fail 529` is a provider that is down, offline (docs/mock.md)."""
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    environment = {**os.environ, "LLMPROXY_HOME": str(tmp_path / "home")}
    llmproxy = [sys.executable, "-m", "llmproxy", "mock"]
    plain = subprocess.run([*llmproxy, "--", "sh", "-c", "exit 3"], env=environment, capture_output=True, text=True)
    assert plain.returncode == 3, plain.stderr
    assert "llmproxy mock: proxy on http://127.0.0.1:" in plain.stderr
    assert "mocking with no expectations" in plain.stderr
    down = subprocess.run(
        [*llmproxy, "--fail", "529", "--", sys.executable, str(child), "hi"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(down.stdout)["status"] == 529, down.stderr
    assert "injected 1 fault (error 1)" in down.stderr
