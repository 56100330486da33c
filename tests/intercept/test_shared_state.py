"""Two proxies sharing one Redis (`--state redis://…`) share one quota and one budget exactly, as the
pytest-xdist workers or parallel CI jobs that run them would; a Redis that cannot be reached fails the run
at start with one line."""

import json
import ssl
import subprocess
import sys
from contextlib import ExitStack
from decimal import Decimal
from pathlib import Path

import httpx2 as httpx

from llmproxy.intercept.rules import ChaosFile, shorthand_rules
from llmproxy.plan import InterceptPlan
from llmproxy.session import Listening, mocking

PLAIN = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
ANSWERS = {"expectations": [{"respond": {"text": "ok", "usage": {"inputTokens": 1000, "outputTokens": 1000}}}]}


def two_proxies(tmp_path: Path, state: str, chaos: ChaosFile) -> tuple[ExitStack, list[httpx.Client]]:
    path = tmp_path / "expectations.json"
    path.write_text(json.dumps(ANSWERS))
    stack = ExitStack()
    clients = []
    for _ in range(2):
        proxy = stack.enter_context(
            mocking(path, Listening(ca_directory=tmp_path / "ca"), intercept=InterceptPlan(chaos, state))
        )
        trust = ssl.create_default_context(cafile=proxy.environment["SSL_CERT_FILE"])
        client = httpx.Client(proxy=proxy.url, verify=trust, timeout=10, base_url="https://api.openai.com")
        stack.callback(client.close)  # closed before the proxies (the stack unwinds backwards)
        clients.append(client)
    return stack, clients


def test_two_proxies_trip_one_quota_at_exactly_its_limit(tmp_path: Path, fresh_redis: str) -> None:
    stack, (one, two) = two_proxies(tmp_path, fresh_redis, ChaosFile(rules=shorthand_rules(rpm=5)))
    with stack:
        statuses = [client.post("/v1/chat/completions", json=PLAIN).status_code for client in (one, two) * 4]
    assert statuses == [200] * 5 + [429] * 3


def test_two_proxies_spend_one_budget(tmp_path: Path, fresh_redis: str) -> None:
    # each answer: 1000 + 1000 tokens of gpt-4o-mini = $0.00075; the budget runs out after three
    stack, (one, two) = two_proxies(tmp_path, fresh_redis, ChaosFile(budgetUsd=Decimal("0.002")))
    with stack:
        statuses = [client.post("/v1/chat/completions", json=PLAIN).status_code for client in (one, two, one, two)]
    assert statuses == [200, 200, 200, 429]


def test_an_unreachable_redis_fails_the_run_at_start_in_one_line(tmp_path: Path, refusing_port: int) -> None:
    path = tmp_path / "expectations.json"
    path.write_text(json.dumps(ANSWERS))
    port = refusing_port
    command = [sys.executable, "-m", "llmproxy", "mock", "--expectations", str(path)]
    run = subprocess.run(
        [*command, "--state", f"redis://127.0.0.1:{port}/0", "--rpm", "5", "--", sys.executable, "-c", "print('ran')"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "ran" not in run.stdout  # nothing started
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"llmproxy mock: error: --state redis://127.0.0.1:{port}/0: cannot use Redis: ")
