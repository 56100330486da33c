"""The pytest plugin's `--llmproxy-ui`: the dashboard's URL of the proxy the tests run through, printed whatever
pytest captures, with the token the tests' control API has."""

import re

import pytest

from tests.testing import conftest as plugin_tests

llmproxy_home, tester = plugin_tests.llmproxy_home, plugin_tests.tester

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # mitmproxy's dependencies, when loaded

NOTED = """
import os

def test_notes_its_control_port(llmproxy_control):
    with open("control.txt", "w") as file:
        file.write(os.environ["LLMPROXY_CONTROL_URL"] + " " + os.environ["LLMPROXY_CONTROL_TOKEN"])
"""


def test_the_dashboards_url_is_printed_with_the_runs_token(tester: pytest.Pytester) -> None:
    tester.makepyfile(test_noted=NOTED)
    result = tester.runpytest_subprocess("--llmproxy-ui", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    control, token = (tester.path / "control.txt").read_text().split()
    printed = re.findall(r"llmproxy pytest: dashboard (\S+)", result.stderr.str())
    origin = control.removesuffix("/llmproxy/chaos")
    assert printed == [f"{origin}/llmproxy/ui/?token={token}"]


def test_without_the_option_nothing_is_printed(tester: pytest.Pytester) -> None:
    tester.makepyfile(test_noted=NOTED)
    result = tester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "dashboard" not in result.stderr.str()
