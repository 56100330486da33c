"""Stop over REST ends a run as Ctrl-C would, after its answer is sent: under the CLI, the command gets the
SIGINT a terminal would send and llmproxy ends with its exit status (130 without a command), the summary
printed; in-process, only that session ends (its cassette finished, its summary set) — the test running it
is not interrupted."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.control.client import Client, ControlError
from llmproxy.session import Listening, recording
from tests.control.test_run_api import CAPITAL, ask
from tests.mock.sdk_clients import openai_client

# The run ends once the answer is sent: the Ctrl-C may come before the command has printed it, so the command
# holds Ctrl-C back until it has (it is then delivered, as a terminal's would be).
STOP_THEN_WAIT = (
    "import signal, time; from llmproxy.control.client import Client; "
    "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}); "
    "print(Client.from_environment().stop().stopping, flush=True); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); time.sleep(120)"
)


def llmproxy(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "llmproxy", *arguments]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "LLMPROXY_HOME": str(tmp_path / "home")}


def test_stop_interrupts_the_command_as_ctrl_c_and_llmproxy_ends_with_its_status(
    tmp_path: Path, env: dict[str, str]
) -> None:
    run = llmproxy("mock", "--", sys.executable, "-c", STOP_THEN_WAIT)
    result = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False, env=env, cwd=tmp_path)
    assert result.returncode == 130, result.stderr  # Python's exit on an unhandled Ctrl-C
    assert result.stdout.splitlines()[0] == "True"  # the answer came before the run ended
    assert "KeyboardInterrupt" in result.stderr
    assert "llmproxy mock: mock answered 0 of 0 requests" in result.stderr


def test_stop_reaches_what_the_command_started_as_a_terminal_would(tmp_path: Path, env: dict[str, str]) -> None:
    shell = f"{sys.executable} -c '{STOP_THEN_WAIT}'; echo the shell went on"
    run = llmproxy("mock", "--", "sh", "-c", shell)
    result = subprocess.run(run, capture_output=True, text=True, timeout=120, check=False, env=env, cwd=tmp_path)
    assert result.returncode == 130, result.stderr
    assert "the shell went on" not in result.stdout


def test_stop_without_a_command_ends_as_ctrl_c(tmp_path: Path, env: dict[str, str]) -> None:
    run = llmproxy("mock", "--print-env")
    with subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        exported = {}
        for line in process.stdout:
            name, _, value = line.removeprefix("export ").strip().partition("=")
            exported[name] = value.strip("'\"")
            if "LLMPROXY_CONTROL_TOKEN_READONLY" in exported:
                break
        control = Client(exported["LLMPROXY_CONTROL_URL"], exported["LLMPROXY_CONTROL_TOKEN"])
        read_only = Client(exported["LLMPROXY_CONTROL_URL"], exported["LLMPROXY_CONTROL_TOKEN_READONLY"])
        with pytest.raises(ControlError, match="the read-only token cannot"):
            read_only.stop()
        assert control.stop().stopping
        assert process.wait(timeout=60) == 130
        assert "llmproxy mock: mock answered 0 of 0 requests" in process.stderr.read()


def test_stop_ends_an_in_process_session_only_with_its_cassette_finished(tmp_path: Path) -> None:
    cassette = tmp_path / "recorded.json"
    with recording(cassette, Listening(ca_directory=tmp_path / "ca")) as proxy:
        control = Client.from_environment(proxy.environment)
        control.add_expectations({"expectations": [CAPITAL]})
        with openai_client(proxy) as client:
            ask(client, "The capital of France?")
        assert control.stop().stopping
        assert proxy.ended.wait(30)
        assert proxy.summary.startswith("mock answered 1 of 1 request")
        assert cassette.exists()  # finished, not waiting for the block to end
        with pytest.raises(ControlError) as gone:
            control.status()
        assert gone.value.status == 0
    assert proxy.summary.startswith("mock answered 1 of 1 request")  # leaving the block closes nothing twice
