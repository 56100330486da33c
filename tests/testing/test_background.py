"""Background traffic under the pytest plugin, as under `llmproxy replay`: a test that replays gets a harmless
answer for the analytics protocols llmproxy knows by their shape (here PostHog's `/batch/`) and for every request
to a host `--llmproxy-background-host` (or the ini key) names, instead of a miss that fails it; a test that
records sends them on, and its cassette keeps none of them."""

import json

import pytest

from tests.testing.test_plugin import module
from tests.testing.upstream import Upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
INI = "[pytest]\nfilterwarnings = ignore::DeprecationWarning\nasyncio_default_fixture_loop_scope = function\n"

TELEMETRY = """
import ssl
import httpx

def test_agent_and_its_telemetry(llmproxy):
    assert ask("hello").startswith("answer")
    trusted = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    event = {"model": "m", "messages": [{"role": "user", "content": "started"}]}  # the stand-in answers it
    with httpx.Client(verify=trusted) as client:
        flags = client.post("https://us.i.posthog.com/batch/", json=event)
        usage = client.post("https://telemetry.example.com/v1/usage", json=event)
    assert (flags.status_code, usage.status_code) < (400, 400), (flags.status_code, usage.status_code)
"""


def test_background_traffic_is_answered_harmlessly_in_replay(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    module(tester, upstream, "test_telemetry", TELEMETRY)
    mapped = [f"--llmproxy-map={host}={upstream.url}" for host in ("us.i.posthog.com", "telemetry.example.com")]
    before = upstream.count
    recording = ["-p", "no:cacheprovider", "--llmproxy-background-host", "telemetry.example.com", *mapped]
    tester.runpytest(*recording).assert_outcomes(passed=1)
    assert upstream.count == before + 3  # a test that records sends its background traffic on
    cassette = json.loads(
        (tester.path / "cassettes" / "test_telemetry" / "test_agent_and_its_telemetry.json").read_text()
    )
    assert [exchange["request"]["url"].rsplit("/", 1)[1] for exchange in cassette["exchanges"]] == ["messages"]

    monkeypatch.setenv("CI", "1")
    missed = tester.runpytest("-p", "no:cacheprovider")  # PostHog is known by its shape, the other host is not
    missed.assert_outcomes(failed=1)
    missed.stdout.fnmatch_lines(["*telemetry.example.com*"])
    assert "us.i.posthog.com" not in missed.stdout.str()

    tester.makeini(f"{INI}llmproxy_background_host =\n    telemetry.example.com\n")
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert upstream.count == before + 3  # replayed and answered here: nothing reached the stand-in


def test_a_bad_background_host_is_a_usage_error(tester: pytest.Pytester, upstream: Upstream):
    module(tester, upstream, "test_options", "def test_one(llmproxy):\n    ask('one')\n")
    result = tester.runpytest_subprocess("--llmproxy-background-host", "https://telemetry.example.com/")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --llmproxy-background-host expects a host name such as telemetry.example.com,"
            " got 'https://telemetry.example.com/'"
        ]
    )
