"""docs/ui.md's commands run as written (a client for `agent.py`, the page's URL read from what they print), and
docs/control.md's curl example of the event stream reads the stream of a running mock."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.control import test_page

folder = test_page.folder  # control.md's folder, which `page_folder` extends

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "ui.md"
SHELL = re.compile(r"```sh\n(.*?)```", re.S)
LLMPROXY = [sys.executable, "-m", "llmproxy"]
AGENT = """
import openai
with openai.OpenAI(api_key="sk-test", max_retries=0) as client:
    answer = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
print(answer.choices[0].message.content)
"""


@pytest.fixture
def page_folder(folder: Path) -> Path:
    """control.md's folder (no proxy in the environment, a home of its own), with an expectations file and
    the `agent.py` the page runs."""
    (folder / "expectations.json").write_text(json.dumps({"expectations": [{"respond": {"text": "Hello."}}]}))
    (folder / "agent.py").write_text(AGENT)
    return folder


def commands() -> list[str]:
    return [line.split("#")[0].strip() for block in SHELL.findall(PAGE.read_text()) for line in block.splitlines()]


def test_the_mock_with_ui_prints_the_dashboard_and_serves_the_command(page_folder: Path) -> None:
    [command] = [line for line in commands() if line.startswith("llmproxy mock")]
    argv = [*LLMPROXY, *command.removeprefix("llmproxy ").replace("python", sys.executable).split()]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello."
    assert re.search(r"llmproxy mock: dashboard http://127\.0\.0\.1:\d+/llmproxy/ui/\?token=\S+\n", result.stderr)


def served(command: str, env: dict[str, str] | None = None) -> list[str]:
    """The first two lines `llmproxy ui …` prints, then Ctrl-C."""
    argv = [*LLMPROXY, *command.removeprefix("llmproxy ").split()]
    with subprocess.Popen(argv, cwd=ROOT, stderr=subprocess.PIPE, text=True, env=env) as process:
        assert process.stderr is not None
        said = [process.stderr.readline() for _ in range(2)]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 128 + signal.SIGINT
    assert re.fullmatch(r"llmproxy ui: dashboard http://127\.0\.0\.1:\d+/llmproxy/ui/\?token=\S+\n", said[1])
    return said


def test_llmproxy_ui_serves_the_cassettes_until_stopped() -> None:
    [command] = [line for line in commands() if line.startswith("llmproxy ui cassettes/")]
    said = served(command)
    cassettes = len(
        [path for path in (ROOT / "cassettes").rglob("*.json") if b"llmproxy_cassette" in path.read_bytes()]
    )
    assert re.fullmatch(rf"llmproxy ui: \d+ exchanges from {cassettes} cassettes\n", said[0])


def test_llmproxy_ui_serves_an_agents_logs_from_where_it_keeps_them(tmp_path: Path) -> None:
    [command] = [line for line in commands() if line.startswith("llmproxy ui --from")]
    projects = tmp_path / ".claude" / "projects" / "-home-user-work"
    projects.mkdir(parents=True)
    for log in (ROOT / "tests" / "fixtures" / "agent_logs" / "claude").glob("*.jsonl"):
        shutil.copy(log, projects / log.name)
    said = served(command, {"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert said[0] == "llmproxy ui: 2 exchanges from 0 cassettes and 1 agent log\n"


def test_the_curl_example_reads_the_event_stream(page_folder: Path) -> None:
    text = (ROOT / "docs" / "control.md").read_text()
    section = text.split("\n### The event stream\n", 1)[1].split("\n### ", 1)[0]
    [command] = SHELL.findall(section)
    # the stream stays open: curl is stopped after a second, as a reader that went away
    run = [
        *LLMPROXY,
        "mock",
        "--expectations",
        "expectations.json",
        "--",
        "sh",
        "-c",
        f"timeout 1 {command.strip()}; true",
    ]
    result = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    events = re.findall(r"^event: (\w+)\ndata: (.*)$", result.stdout, re.M)
    assert [name for name, _ in events[:2]] == ["hello", "counters"]
    assert json.loads(events[0][1])["counts"]["last"] == 0
    assert json.loads(events[1][1])["expectations"][0]["served"] == 0
