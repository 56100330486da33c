"""What the plugin says about a run: a line per cassette it recorded at the end of the session (gathered from
xdist workers too), a miss once, and a recording that holds a cassette named by its test and pytest session."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.testing.test_plugin import module
from tests.testing.upstream import Upstream

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


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
            f" (test_hold.py::test_holds, in the pytest session started ??:?? in {tester.path}, pid {holder.pid})"
        ]
    )
