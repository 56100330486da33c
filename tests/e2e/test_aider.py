"""aider, the Python coding CLI from PyPI, pointed at OpenAI only as docs/clis.md says a user points it:
recorded once by `llmproxy record` against a scripted local upstream (`--map`), replayed strictly and offline
from another, differently named folder with a fresh HOME, and run under `llmproxy mock`. aider has no tool
calls: the model edits a file by answering with its whole new content, and aider writes it. Each run exits 0,
misses nothing and leaves the file the model wrote.

aider wants a Python older than 3.13, so scripts/setup.sh installs it into a virtualenv of its own
(`.venv-aider`, on a Python 3.12 it finds) beside the npm CLIs."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from llmproxy.model import Completion, StopReason
from tests.e2e.clis import Cli, around, cli_env, record_scripted

MARKER = "llmproxy-ok"
# aider's "whole" edit format: the file's name, then its whole content in a fence
EDIT = f"hello.txt\n```\n{MARKER}\n```\n"
AIDER = Cli(
    "aider",
    "openai-chat",
    [Completion(text=EDIT, stop_reason=StopReason.END_TURN)],
    [
        "--model",
        "gpt-4o",
        "--edit-format",
        "whole",
        "--no-git",
        "--yes-always",
        "--message",
        f"Write {MARKER} into hello.txt",
        "hello.txt",
    ],
    installed_as=".venv-aider/bin/aider",  # scripts/setup.sh
)
POINTING = {"OPENAI_API_KEY": "sk-proj-" + "Qw3rTy8uIoP1aSdF" * 3}
# what it asks beside the model: its update check, and litellm's price list (which it ships a copy of)
ALSO = ("pypi.org", "raw.githubusercontent.com")


@dataclass(frozen=True)
class World:
    cassette: Path
    root: Path


def edited(root: Path, folder: str = "work") -> str:
    return (root / folder / "hello.txt").read_text()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """aider recorded once: it asked the model, applied the edit, and the cassette holds the one call."""
    if AIDER.binary is None:
        pytest.skip("aider is not installed: scripts/setup.sh installs it (needs a Python 3.12)")
    root = tmp_path_factory.mktemp("aider")
    recorded, cassette, upstream = record_scripted(
        AIDER, root, "api.openai.com", cli_env(root / "record", **POINTING), *ALSO
    )
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    assert len(upstream.bodies) == 1
    assert edited(root / "record") == f"{MARKER}\n"
    return World(cassette, root)


@pytest.mark.e2e
def test_it_replays_strictly_offline_from_another_folder_with_a_fresh_home(world: World) -> None:
    root = world.root / "replay"
    env = cli_env(root, folder="another-project", **POINTING)
    replayed = around(AIDER, root, env, "replay", "--cassette", str(world.cassette), folder="another-project")
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert "0 missed" in replayed.stderr, replayed.stderr[-3000:]
    assert "PyPI version check" in replayed.stderr  # answered harmlessly, not a miss
    assert edited(root, "another-project") == f"{MARKER}\n"


@pytest.mark.e2e
def test_it_applies_a_mocked_edit(world: World) -> None:
    root = world.root / "mock"
    env = cli_env(root, **POINTING)
    expectations = root / "expectations.json"
    expectations.write_text(
        json.dumps({"expectations": [{"match": {"provider": "openai"}, "respond": {"text": EDIT}}]})
    )
    log = root / "mock.jsonl"
    mocked = around(AIDER, root, env, "mock", "--expectations", str(expectations), "--log", str(log))
    assert mocked.returncode == 0, mocked.stderr[-3000:]
    answered = sorted(json.loads(line)["answeredBy"] for line in log.read_text().splitlines())
    assert answered[-1] == "expectation 1"  # the one model call; the rest its background traffic, none missed
    assert set(answered[:-1]) == {"background"}
    assert edited(root) == f"{MARKER}\n"
