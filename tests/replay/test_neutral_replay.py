"""A client nobody wrote a preset for (the official OpenAI SDK, shaped like a coding agent: its working directory,
HOME-relative paths and the time in its system prompt, a fresh session id, a budget derived from the prompt's
length), recorded in one folder with HOME inside it, replays strictly and offline from another folder with a
fresh HOME; a real difference still misses, and `--preset none` compares as sent."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from llmproxy.cassette.model import JsonBody
from llmproxy.cassette.store import load_cassette
from tests.certs import make_test_ca
from tests.e2e.clis import ScriptedServer
from tests.record.world import CLIENTS, HOSTS, turns

SECRET = "sk-proj-" + "n3utr4l" * 8


@dataclass(frozen=True)
class Recorded:
    cassette: Path
    output: dict[str, str]
    root: Path


def run(
    verb: str, cassette: Path, folder: Path, home: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """`llmproxy VERB --cassette … ARGS -- python clients.py agent`, run in `folder` with `home` as HOME."""
    folder.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "LLMPROXY_HOME": str(cassette.parent.parent / "llmproxy"),
        "PLANTED_SECRET": SECRET,
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "llmproxy",
            verb,
            "--cassette",
            str(cassette),
            *args,
            "--",
            sys.executable,
            str(CLIENTS),
            "agent",
        ],
        cwd=folder,
        env=environment | env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """One session recorded in `alpha` with HOME `alpha/home`, the upstream stopped afterwards."""
    root = tmp_path_factory.mktemp("neutral")
    upstream_ca = make_test_ca(root, HOSTS)
    upstream = ScriptedServer(turns(1), {}, tls=upstream_ca.server_context)
    cassette = root / "cassettes" / "agent.json"
    mapping = [f"--map={host}={upstream.url}" for host in HOSTS]
    alpha = root / "alpha"
    try:
        done = run("record", cassette, alpha, alpha / "home", *mapping, "--upstream-ca", str(upstream_ca.cert_path))
    finally:
        upstream.close()
    assert done.returncode == 0, done.stderr
    return Recorded(cassette, json.loads(done.stdout), root)


def test_the_cassette_keeps_what_was_sent_and_where(recorded: Recorded) -> None:
    (exchange,) = load_cassette(recorded.cassette).exchanges
    assert exchange.places is not None
    assert exchange.places.cwd == str(recorded.root / "alpha")
    assert exchange.places.home == str(recorded.root / "alpha" / "home")
    body = exchange.request.body
    assert isinstance(body, JsonBody)
    assert f"Working directory: {recorded.root / 'alpha'}\n" in body.json_["messages"][0]["content"]


def test_it_replays_strictly_from_another_folder_with_a_fresh_home(recorded: Recorded) -> None:
    beta = recorded.root / "beta-checkout" / "nested"  # HOME two levels up: its relative path differs too
    done = run("replay", recorded.cassette, beta, recorded.root / "beta-checkout" / "home")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == recorded.output
    assert "0 missed, 0 unused" in done.stderr


def test_a_real_prompt_difference_still_misses_and_says_where(recorded: Recorded) -> None:
    gamma = recorded.root / "gamma"
    done = run("replay", recorded.cassette, gamma, gamma / "home", QUESTION="What is the capital of Italy?")
    assert done.returncode != 0
    assert "1 missed" in done.stderr
    assert "$.messages[1].content: recorded '…t is the capital of France? Answer in one word.'" in done.stderr
    assert "received '…t is the capital of Italy?'" in done.stderr
    # the system prompt and the budget derived from it, neutralised, are the same
    assert "$.messages[0].content" not in done.stderr
    assert "$.max_tokens" not in done.stderr


def test_preset_none_compares_requests_as_sent(recorded: Recorded) -> None:
    delta = recorded.root / "delta"
    done = run("replay", recorded.cassette, delta, delta / "home", "--preset", "none")
    assert done.returncode != 0
    assert "1 missed" in done.stderr
    assert "$.messages[0].content: recorded" in done.stderr
