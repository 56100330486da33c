"""What the plugin says about a run: a line per cassette it recorded at the end of the session (gathered from
xdist workers too), a miss once, and a recording that holds a cassette named by its test and pytest session."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.testing.test_plugin import module
from tests.testing.upstream import Upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    for _ in range(1200):  # the other pytest starts, imports and reaches its test: a minute at most
        if path.exists() or process.poll() is not None:
            return
        time.sleep(0.05)


def test_a_cassette_another_test_session_records_names_that_test_and_session(
    tester: pytest.Pytester, upstream: Upstream
):
    body = """
import pathlib, time

@pytest.mark.llmproxy("shared", mode="all")
def test_holds(llmproxy):
    pathlib.Path("holding").touch()
    for _ in range(1200):
        if pathlib.Path("release").exists():
            break
        time.sleep(0.05)
"""
    module(tester, upstream, "test_hold", body)
    second = '@pytest.mark.llmproxy("shared", mode="all")\ndef test_second(llmproxy):\n    pass\n'
    module(tester, upstream, "test_second", second)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_hold.py"]
    holder = subprocess.Popen(command, cwd=tester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for(tester.path / "holding", holder)
        result = tester.runpytest("-p", "no:cacheprovider", "test_second.py")
    finally:
        (tester.path / "release").touch()
        output = holder.communicate(timeout=120)[0].decode()
    assert holder.returncode == 0, output
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            f"llmproxy: cannot record to {tester.path}/cassettes/shared.json: another recording is writing it"
            f" (pid {holder.pid}: test_hold.py::test_holds, in the pytest session started ??:?? in {tester.path})"
        ]
    )


RECORDING = """
def test_new(llmproxy):
    ask("new")

@pytest.mark.llmproxy(mode="new_episodes")
def test_grows(llmproxy):
    for prompt in {prompts}:
        ask(prompt)

@pytest.mark.llmproxy(mode="rewrite")
def test_rewritten(llmproxy):
    ask("rewritten")
    ask("rewritten again")

@pytest.mark.llmproxy(expectations="expectations.json")
def test_mocked(llmproxy):
    assert ask("mocked") == "from the expectations"
"""
SHARING = """
@pytest.mark.llmproxy("shared", mode="all")
def test_shares_one(llmproxy):
    ask("shared one")

@pytest.mark.llmproxy("shared", mode="all")
def test_shares_two(llmproxy):
    ask("shared two")
"""


FIRST_RUN = [
    "*= llmproxy =*",
    "llmproxy recorded 4 cassettes:",
    "  cassettes/shared.json: new, 2 exchanges (test_shared.py::test_shares_one, test_shared.py::test_shares_two)",
    "  cassettes/test_rec/test_grows.json: new, 1 exchange (test_rec.py::test_grows)",
    "  cassettes/test_rec/test_new.json: new, 1 exchange (test_rec.py::test_new)",
    "  cassettes/test_rec/test_rewritten.json: new, 2 exchanges (test_rec.py::test_rewritten)",
]


def recording_modules(tester: pytest.Pytester, upstream: Upstream, prompts: list[str]) -> None:
    module(tester, upstream, "test_rec", RECORDING.format(prompts=prompts))
    module(tester, upstream, "test_shared", SHARING)
    (tester.path / "expectations.json").write_text('{"expectations": [{"respond": {"text": "from the expectations"}}]}')


def test_the_session_ends_with_a_line_per_cassette_it_recorded(tester: pytest.Pytester, upstream: Upstream):
    recording_modules(tester, upstream, ["first"])
    first = tester.runpytest("-p", "no:cacheprovider")
    first.assert_outcomes(passed=6)
    first.stdout.fnmatch_lines(FIRST_RUN)
    assert "test_mocked" not in first.stdout.str()  # it recorded nothing

    recording_modules(tester, upstream, ["first", "second"])
    again = tester.runpytest("-p", "no:cacheprovider")
    again.assert_outcomes(passed=6)
    lines = again.stdout.str().split("llmproxy recorded ", 1)[1].splitlines()
    assert lines[:4] == [
        "3 cassettes:",
        "  cassettes/shared.json: 2 exchanges added (test_shared.py::test_shares_one, test_shared.py::test_shares_two)",
        "  cassettes/test_rec/test_grows.json: 1 exchange added (test_rec.py::test_grows)",
        "  cassettes/test_rec/test_rewritten.json: rewritten, 2 exchanges (test_rec.py::test_rewritten)",
    ]

    replayed = tester.runpytest("-p", "no:cacheprovider", "--llmproxy-mode", "none", "test_rec.py")
    replayed.assert_outcomes(passed=4)
    assert "llmproxy recorded" not in replayed.stdout.str()


def test_xdist_workers_recordings_are_listed_by_the_controller(tester: pytest.Pytester, upstream: Upstream):
    """Each module in a worker of its own: the controller gathers what both recorded."""
    recording_modules(tester, upstream, ["first"])
    result = tester.runpytest("-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(FIRST_RUN)


def test_a_miss_is_shown_once(tester: pytest.Pytester, upstream: Upstream):
    """The SDK's error carries llmproxy's diagnostic: the failure does not repeat it, nor does a captured log."""
    module(tester, upstream, "test_once", "def test_asks(llmproxy):\n    ask('recorded')\n")
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    module(tester, upstream, "test_once", "def test_asks(llmproxy):\n    ask('changed')\n")
    result = tester.runpytest("-p", "no:cacheprovider", "--llmproxy-mode", "none")
    result.assert_outcomes(failed=1)
    failure = result.stdout.str().split("= FAILURES =", 1)[1].split("short test summary")[0]
    assert failure.count("no recorded exchange matches") == 1, failure
    assert "recorded 'recorded', received 'changed'" in failure
    assert "Captured log" not in failure
