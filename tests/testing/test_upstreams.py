"""Recording through a gateway or a stand-in from pytest: `--llmproxy-map` and `--llmproxy-route` (and their ini
keys) mean what `llmproxy record --map/--route` mean. Clients here are the official OpenAI SDK and httpx with
their default URLs (`https://api.openai.com`, a gateway's own name): only llmproxy sends them to the stand-in
upstream on 127.0.0.1, and nothing here resolves a public name."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.testing.tunnel import Tunnel
from tests.testing.upstream import Upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
INI = "[pytest]\nfilterwarnings = ignore::DeprecationWarning\nasyncio_default_fixture_loop_scope = function\n"

OPENAI = """
import openai

def test_greets(llmproxy):
    with openai.OpenAI(api_key="sk-proj-standin", max_retries=0) as client:  # https://api.openai.com/v1
        completion = client.chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "Say hello"}]
        )
    assert completion.choices[0].message.content.startswith("answer")
    assert [(call.provider, call.answered.value) for call in llmproxy.calls] == [
        ("openai", "upstream" if llmproxy.mode == "all" else "hit")
    ]
"""


def test_map_sends_a_provider_host_to_a_stand_in_then_ci_replays_it(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    tester.makepyfile(test_openai_app=OPENAI)
    before = upstream.count
    tester.runpytest("-p", "no:cacheprovider", f"--llmproxy-map=api.openai.com={upstream.url}").assert_outcomes(
        passed=1
    )
    assert upstream.count == before + 1
    cassette = (tester.path / "cassettes" / "test_openai_app" / "test_greets.json").read_text()
    assert '"url": "https://api.openai.com/v1/chat/completions"' in cassette  # as the client sent it

    monkeypatch.setenv("CI", "1")
    tester.runpytest("-p", "no:cacheprovider", "--llmproxy-block-network").assert_outcomes(passed=1)
    assert upstream.count == before + 1


def test_map_and_route_as_ini_keys_declare_a_private_gateway(tester: pytest.Pytester, upstream: Upstream):
    """A gateway whose paths llmproxy cannot know: mapped to the stand-in, read as Anthropic's API by its route, so
    it is recorded and replayed; without the route it is no LLM API, not recorded, and replay refuses it."""
    tester.makepyfile(
        test_gateway="""
import httpx

def test_asks_the_gateway(llmproxy):
    body = {"model": "claude-haiku-4-5", "max_tokens": 32, "messages": [{"role": "user", "content": "hello"}]}
    answer = httpx.post("https://llm.corp.example/llm/generate", json=body, timeout=30).json()
    assert answer["content"][0]["text"].startswith("answer")
    assert [call.provider for call in llmproxy.calls] == ["anthropic"]
    assert llmproxy.tokens.output == 20
"""
    )
    tester.makeini(
        f"{INI}llmproxy_map = llm.corp.example={upstream.url}\n"
        "llmproxy_route =\n    llm.corp.example/llm=anthropic-messages\n"
    )
    before = upstream.count
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert upstream.count == before + 1
    tester.runpytest("-p", "no:cacheprovider", "--llmproxy-mode", "none").assert_outcomes(passed=1)
    assert upstream.count == before + 1


def test_llmproxy_record_around_pytest_maps_what_the_plugins_proxy_sends_on(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    """`llmproxy record --map … -- pytest`: the plugin's proxy takes the tests' HTTPS_PROXY, and goes on through the
    one it replaced — the outer llmproxy, which maps api.openai.com to the stand-in and records the run too."""
    tester.makepyfile(test_openai_app=OPENAI)
    llmproxy = Path(sys.executable).parent / "llmproxy"
    pytest_command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    command = [llmproxy, "record", "--cassette", "run.json", "--map", f"api.openai.com={upstream.url}", "--"]
    before = upstream.count
    done = subprocess.run([*command, *pytest_command], cwd=tester.path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert upstream.count == before + 1
    assert "llmproxy recorded 1 cassette:" in done.stdout
    assert "recorded 1 exchange to run.json (openai 1;" in done.stderr
    (exchange,) = json.loads((tester.path / "run.json").read_text())["exchanges"]
    assert exchange["request"]["url"] == "https://api.openai.com/v1/chat/completions"

    monkeypatch.setenv("CI", "1")  # the test's own cassette, replayed with neither proxy
    tester.runpytest("-p", "no:cacheprovider", "--llmproxy-block-network").assert_outcomes(passed=1)
    assert upstream.count == before + 1


def test_behind_a_proxy_that_asks_for_credentials_the_plugins_proxy_goes_through_it(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    """The environment's HTTP_PROXY, with credentials in its URL: the plugin's proxy opens its tunnels through it,
    authenticated, and never shows them; this machine's own services it reaches directly."""
    tester.makepyfile(
        test_corp="""
import httpx

def test_asks(llmproxy):
    body = {"model": "claude-haiku-4-5", "max_tokens": 32, "messages": [{"role": "user", "content": "hello"}]}
    answer = httpx.post("http://llm.corp.example/v1/messages", json=body, timeout=30).json()
    assert answer["content"][0]["text"].startswith("answer")
"""
    )
    host, port = upstream.url.removeprefix("http://").split(":")
    with Tunnel((host, int(port)), "Basic bWU6cEBzcw==") as corporate:  # me:p@ss
        monkeypatch.setenv("HTTP_PROXY", f"http://me:p%40ss@127.0.0.1:{corporate.port}")
        before = upstream.count
        recorded = tester.runpytest("-p", "no:cacheprovider")
        recorded.assert_outcomes(passed=1)
        assert corporate.connects == [("llm.corp.example:80", "Basic bWU6cEBzcw==")]
        assert upstream.count == before + 1
        assert "p%40ss" not in recorded.stdout.str()
        monkeypatch.setenv("CI", "1")
        tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
        assert len(corporate.connects) == 1


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--llmproxy-map=api.openai.com", "ERROR: --llmproxy-map expects HOST=URL, got 'api.openai.com'"),
        (
            "--llmproxy-map=api.openai.com=ftp://x",
            "ERROR: --llmproxy-map: expected an http(s) URL such as http://127.0.0.1:8000, got 'ftp://x'",
        ),
        ("--llmproxy-route=llm.corp.example", "ERROR: --llmproxy-route expects HOST=CODEC or HOST=VENDOR, got *"),
    ],
)
def test_a_bad_map_or_route_is_a_usage_error(tester: pytest.Pytester, option: str, message: str):
    tester.makepyfile(test_one="def test_one(llmproxy):\n    pass\n")
    result = tester.runpytest_subprocess(option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_the_pages_ini_example_is_read_as_written(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    """docs/pytest.md's ini file, the stand-in's address put in for the page's port 8000: each key read, the map
    followed while recording, and nothing of it needed to replay."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "pytest.md").read_text()
    example = page.split("```ini\n", 1)[1].split("```", 1)[0]
    ini = example.replace("http://127.0.0.1:8000", upstream.url)
    tester.makefile(".ini", pytest=ini + "filterwarnings = ignore::DeprecationWarning\n")
    tester.makepyfile(test_openai_app=OPENAI)
    before = upstream.count
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert upstream.count == before + 1
    monkeypatch.setenv("CI", "1")
    tester.runpytest("-p", "no:cacheprovider", "--llmproxy-block-network").assert_outcomes(passed=1)
    assert upstream.count == before + 1
