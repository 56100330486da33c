"""A test's own local services beside the model: a tool server the test starts on 127.0.0.1 is reached in
replay as it was while recording (it is the test's fixture, not an LLM API, and no cassette holds it), while an
LLM API call on this machine is still replayed; `--llmproxy-allow-host` (or the ini key) lets out more."""

import pytest

from tests.testing.test_plugin import module
from tests.testing.upstream import Upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
INI = "[pytest]\nfilterwarnings = ignore::DeprecationWarning\nasyncio_default_fixture_loop_scope = function\n"

TOOL_SERVER = """
import http.server, threading
import httpx

class Weather(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b'{"city": "Oslo", "celsius": 7}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

@pytest.fixture
def tool_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Weather)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://{HOST}:{server.server_address[1]}"
    server.shutdown()
    server.server_close()

def test_agent_calls_its_tool(llmproxy, tool_server):
    reply = ask("what is the weather in Oslo?")
    assert llmproxy.tool_calls[0].name == "get_weather"
    weather = httpx.get(tool_server + "/weather", params={"city": "Oslo"}).json()  # through the proxy, as set
    assert weather["celsius"] == 7 and reply
"""


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_local_tool_server_is_reached_in_replay_as_while_recording(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch, host: str
):
    module(tester, upstream, "test_tools", f'HOST = "{host}"\n' + TOOL_SERVER)
    before = upstream.count
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert upstream.count == before + 1
    monkeypatch.setenv("CI", "1")
    replayed = tester.runpytest("-p", "no:cacheprovider", "--llmproxy-block-network")
    replayed.assert_outcomes(passed=1)
    assert upstream.count == before + 1  # the LLM call on this machine was replayed, not sent to the stand-in


ASKS_AGAIN = """
def test_asks(llmproxy):
    assert ask("{prompt}").startswith("answer")
"""


def test_an_llm_api_on_this_machine_is_replayed_unless_allowed(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    """The stand-in upstream listens on 127.0.0.1 and speaks Anthropic's API: a request no recording answers is
    a miss, not passed to it — unless `--llmproxy-allow-host` names it, as a local model server CI runs too."""
    module(tester, upstream, "test_local_model", ASKS_AGAIN.format(prompt="recorded"))
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    module(tester, upstream, "test_local_model", ASKS_AGAIN.format(prompt="not recorded"))
    before = upstream.count
    missed = tester.runpytest("-p", "no:cacheprovider", "--llmproxy-mode", "none")
    missed.assert_outcomes(failed=1)
    assert "no recorded exchange matches" in missed.stdout.str()
    assert upstream.count == before

    port = upstream.url.rsplit(":", 1)[1]
    allowed = tester.runpytest(
        "-p", "no:cacheprovider", "--llmproxy-mode", "none", f"--llmproxy-allow-host=127.0.0.1:{port}"
    )
    allowed.assert_outcomes(passed=1)
    assert upstream.count == before + 1

    tester.makeini(f"{INI}llmproxy_allow_host =\n    api.example.com\n    127.0.0.1:{port}\n")
    tester.runpytest("-p", "no:cacheprovider", "--llmproxy-mode", "none").assert_outcomes(passed=1)
    assert upstream.count == before + 2


def test_a_bad_allow_host_is_a_usage_error(tester: pytest.Pytester, upstream: Upstream):
    module(tester, upstream, "test_options", "def test_one(llmproxy):\n    ask('one')\n")
    result = tester.runpytest_subprocess("--llmproxy-allow-host", "http://api.example.com/")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --llmproxy-allow-host expects HOST, HOST:PORT or an address (api.github.com, 127.0.0.1:8080),"
            " got 'http://api.example.com/'"
        ]
    )
