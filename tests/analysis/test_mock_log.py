"""A report over `llmproxy mock --log FILE`: the real mock answers a client, then the log is reported on."""

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

from llmproxy.analysis.report import Report

CHILD = """
import os, ssl, sys
import httpx2 as httpx

trust = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
with httpx.Client(proxy=os.environ["HTTPS_PROXY"], verify=trust) as client:
    for prompt in sys.argv[1:]:
        body = {"model": "claude-haiku-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": prompt}]}
        client.post("https://api.anthropic.com/v1/messages", json=body, headers={"anthropic-version": "2023-06-01"})
"""
EXPECTATIONS = {
    "expectations": [
        {
            "match": {"latestMessageContains": "weather"},
            "respond": {
                "toolCalls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
                "usage": {"inputTokens": 1000, "outputTokens": 50, "cachedInputTokens": 400},
            },
        },
        {"match": {"latestMessageContains": "capital"}, "respond": {"text": "Paris."}},
    ]
}


def llmproxy(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "llmproxy", *args],
        cwd=cwd,
        env={**os.environ, "LLMPROXY_HOME": str(cwd / "home")},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_mock_log_is_reported_on(tmp_path: Path) -> None:
    (tmp_path / "expectations.json").write_text(json.dumps(EXPECTATIONS))
    (tmp_path / "child.py").write_text(CHILD)
    prompts = ("What is the weather?", "What is the capital of France?", "Write a poem")
    ran = llmproxy(
        "mock",
        "--expectations",
        "expectations.json",
        "--log",
        "mock.jsonl",
        "--",
        sys.executable,
        "child.py",
        *prompts,
        cwd=tmp_path,
    )
    assert ran.returncode == 1, ran.stderr  # the poem found no expectation
    entries = [json.loads(line) for line in (tmp_path / "mock.jsonl").read_text().splitlines()]
    assert entries[0]["usage"] == {"inputTokens": 1400, "outputTokens": 50, "cachedInputTokens": 400}
    assert entries[1]["usage"]["estimated"] is True
    assert all("startedAt" in entry for entry in entries)

    done = llmproxy("report", "mock.jsonl", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = Report.model_validate_json(done.stdout)
    assert report.sources[0].skipped == {"no expectation matched": 1}
    first, second = report.calls
    assert (first.inputTokens, first.cachedInputTokens, first.outputTokens) == (1400, 400, 50)
    assert [tool.name for tool in first.toolCalls] == ["get_weather"]
    # claude-haiku-4-5: $1 input, $0.10 cache read, $5 output per million tokens
    assert Decimal(first.estimatedCostUsd or "") == (1000 * Decimal(1) + 400 * Decimal("0.1") + 50 * 5) / 10**6
    assert (first.costIsEstimated, second.tokensEstimated, second.costIsEstimated) == (False, True, True)
    assert report.totals.costIsEstimated

    gate = llmproxy("verify", "tool-call", "mock.jsonl", "--name", "get_weather", "--args-regex", "Paris", cwd=tmp_path)
    assert gate.returncode == 0, gate.stderr
