"""The pytest plugin, run by pytester on test modules that use the official Anthropic and OpenAI SDKs: record
modes, per-test cassettes swapped on one proxy (never restarted), redacted, misses failing the test that
missed, unused exchanges, rewrite, expectations, pytest-asyncio and pytest-xdist. The stand-in upstream
(tests/testing/upstream.py) numbers its answers, so a replay is told from a new recording; its request count
proves what reached the network."""

import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.cassette.files import journal_path
from llmproxy.cassette.redact import Redactor
from llmproxy.cassette.store import CassetteWriter
from llmproxy.model.exchange import RawExchange, RawResponse
from llmproxy.plan import RecordMode
from llmproxy.testing.plugin import MODES, default_mode
from tests.cassette import factory
from tests.cassette.factory import STARTED
from tests.testing.upstream import Upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # mitmproxy's dependencies, when loaded
]

# shaped like real keys, and never real ones: a recorded cassette must hold neither
ANTHROPIC_KEY = "sk-ant-api03-" + "Pl4nt3dK3y_" * 8
OPENAI_KEY = "sk-proj-" + "Pl4nt3dK3y" * 5
HEADER = """
import json, os
import anthropic, pytest

UPSTREAM = "{url}"

def ask(prompt, retries=0, base_url=UPSTREAM, **options):
    with anthropic.Anthropic(api_key="{key}", base_url=base_url, max_retries=retries, **options) as client:
        message = client.messages.create(
            model="claude-haiku-4-5", max_tokens=32, messages=[{{"role": "user", "content": prompt}}]
        )
    return message.content[0].text

def note(request, text):
    with open("answers.jsonl", "a") as file:
        file.write(json.dumps({{"test": request.node.nodeid, "text": text}}) + "\\n")
"""

AGENT = """
def test_hello(llmproxy, request):
    note(request, ask("hello"))
    assert [call.answered.value for call in llmproxy.calls] == ["upstream" if llmproxy.mode == "all" else "hit"]
    assert llmproxy.tokens.input == 100 and llmproxy.tokens.output == 20
    assert llmproxy.cost_usd > 0
    assert os.environ["HTTP_PROXY"] == llmproxy.url

def test_same_request_own_cassette(llmproxy, request):
    note(request, ask("hello"))  # test_hello's request: its own cassette holds its own answer

@pytest.mark.llmproxy
@pytest.mark.parametrize("city", ["Oslo", "Lima"])
def test_weather(llmproxy, request, city):
    note(request, ask(f"weather in {city}"))
    assert [tool.name for tool in llmproxy.tool_calls] == ["get_weather"]

def test_without_llmproxy():
    assert "HTTP_PROXY" not in os.environ
"""


def module(tester: pytest.Pytester, upstream: Upstream, name: str, body: str) -> Path:
    return tester.makepyfile(**{name: HEADER.format(url=upstream.url, key=ANTHROPIC_KEY) + body})


def answers(tester: pytest.Pytester) -> dict[str, str]:
    path = tester.path / "answers.jsonl"
    found = {entry["test"]: entry["text"] for entry in map(json.loads, path.read_text().splitlines())}
    path.unlink()
    return found


def exchanges(path: Path) -> list[str]:
    """The recorded answers' texts, in order."""
    cassette = json.loads(path.read_text())
    return [e["response"]["body"]["json"]["content"][0]["text"] for e in cassette["exchanges"]]


def test_each_test_records_its_own_cassette_then_replays_it_offline(tester: pytest.Pytester, upstream: Upstream):
    module(tester, upstream, "test_agent", AGENT)
    before = upstream.count
    recorded = tester.runpytest("--llmproxy-mode", "once")
    recorded.assert_outcomes(passed=5)
    assert upstream.count == before + 4
    folder = tester.path / "cassettes" / "test_agent"
    assert sorted(path.name for path in folder.iterdir()) == [
        "test_hello.json",
        "test_same_request_own_cassette.json",
        "test_weather[Lima].json",
        "test_weather[Oslo].json",
    ]
    first = answers(tester)
    for cassette in folder.iterdir():  # redacted by default: a placeholder where the key was
        text = cassette.read_text()
        assert ANTHROPIC_KEY not in text
        assert "<redacted:sk-ant:" in text

    replayed = tester.runpytest("--llmproxy-mode", "none", "--llmproxy-block-network")
    replayed.assert_outcomes(passed=5)
    assert upstream.count == before + 4  # nothing reached the network
    assert answers(tester) == first  # each test got its own cassette's answer, the same request notwithstanding
    hello, again = first["test_agent.py::test_hello"], first["test_agent.py::test_same_request_own_cassette"]
    assert hello != again

    in_two_workers = tester.runpytest("--llmproxy-mode", "none", "-n", "2")
    in_two_workers.assert_outcomes(passed=5)
    assert upstream.count == before + 4
    assert answers(tester) == first


def test_openai_sdk_records_its_own_cassette_without_the_key_then_replays_it(
    tester: pytest.Pytester, upstream: Upstream
):
    body = f"""
import openai

def ask_openai(prompt):
    with openai.OpenAI(api_key="{OPENAI_KEY}", base_url=UPSTREAM + "/v1", max_retries=0) as client:
        completion = client.chat.completions.create(
            model="gpt-4.1-mini", messages=[{{"role": "user", "content": prompt}}]
        )
    return completion.choices[0].message.content

def test_openai(llmproxy, request):
    note(request, ask_openai("hello from the OpenAI SDK"))
    (call,) = llmproxy.calls
    assert (call.provider, call.path) == ("openai", "/v1/chat/completions")
    assert call.answered.value == ("upstream" if llmproxy.mode == "all" else "hit")
    assert llmproxy.tokens.input == 100 and llmproxy.tokens.output == 20
    assert llmproxy.cost_usd > 0
"""
    module(tester, upstream, "test_openai_sdk", body)
    before = upstream.count
    tester.runpytest("--llmproxy-mode", "once").assert_outcomes(passed=1)
    assert upstream.count == before + 1
    cassette = tester.path / "cassettes" / "test_openai_sdk" / "test_openai.json"
    text = cassette.read_text()
    assert OPENAI_KEY not in text  # redacted by default
    assert "<redacted:sk:" in text
    recorded = answers(tester)

    tester.runpytest("--llmproxy-mode", "none", "--llmproxy-block-network").assert_outcomes(passed=1)
    assert upstream.count == before + 1  # replayed: nothing reached the network
    assert answers(tester) == recorded


def test_a_project_recorded_in_one_folder_replays_from_another_with_a_fresh_home(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    """The default preset's places are the test's working directory and HOME: a prompt that holds them, recorded
    in one checkout, replays strictly from another checkout of the project with another HOME."""
    body = """
import pathlib

def test_where(llmproxy, request):
    note(request, ask(f"Working directory: {os.getcwd()}. Settings: {pathlib.Path.home()}/.agent/settings.json"))
    assert [call.answered.value for call in llmproxy.calls] == ["upstream" if llmproxy.mode == "all" else "hit"]
"""
    source = module(tester, upstream, "test_where", body)
    monkeypatch.setenv("HOME", str(tester.path / "home"))
    before = upstream.count
    tester.runpytest("--llmproxy-mode", "once").assert_outcomes(passed=1)
    assert upstream.count == before + 1
    recorded = answers(tester)
    cassette = tester.path / "cassettes" / "test_where" / "test_where.json"
    assert str(tester.path) in cassette.read_text()  # as sent

    checkout = tester.path.parent / (tester.path.name + "-another-checkout")
    (checkout / "cassettes").mkdir(parents=True)
    shutil.copy(source, checkout / source.name)
    shutil.copytree(tester.path / "cassettes" / "test_where", checkout / "cassettes" / "test_where")
    shutil.copy(tester.path / "tox.ini", checkout / "tox.ini")
    monkeypatch.chdir(checkout)
    monkeypatch.setenv("HOME", str(checkout / "fresh-home"))
    replayed = tester.runpytest(str(checkout), "--rootdir", str(checkout), "--llmproxy-mode", "none")
    replayed.assert_outcomes(passed=1)
    assert upstream.count == before + 1
    path = checkout / "answers.jsonl"
    assert [json.loads(line)["text"] for line in path.read_text().splitlines()] == list(recorded.values())


def test_the_proxy_is_not_restarted_between_tests(tester: pytest.Pytester, upstream: Upstream):
    """One proxy for the session: the second test finds the first's URL, and a connection the first opened to
    it still open (a restarted proxy would have closed it)."""
    body = """
import socket
from urllib.parse import urlsplit

KEPT = {}

def test_first(llmproxy):
    ask("first")
    address = urlsplit(llmproxy.url)
    KEPT["url"], KEPT["connection"] = llmproxy.url, socket.create_connection((address.hostname, address.port))

@pytest.mark.llmproxy(mode="all")
def test_second(llmproxy):
    ask("second")
    assert llmproxy.url == KEPT["url"]
    with KEPT.pop("connection") as connection:
        connection.setblocking(False)
        with pytest.raises(BlockingIOError):  # nothing to read yet: neither closed (b"") nor reset
            connection.recv(1)
"""
    module(tester, upstream, "test_one_proxy", body)
    tester.runpytest("--llmproxy-mode", "all").assert_outcomes(passed=2)


def test_a_miss_fails_the_test_that_missed_with_the_diagnostic(tester: pytest.Pytester, upstream: Upstream):
    body = """
@pytest.mark.llmproxy(mode="all")
def test_records_first(llmproxy):
    ask("recorded anew each run")

def test_kept(llmproxy):
    assert llmproxy.mode == "{mode}"
    assert ask("the same question").startswith("answer")

def test_changed(llmproxy):
    ask("{prompt}")
"""
    module(tester, upstream, "test_miss", body.format(mode="all", prompt="what was recorded"))
    tester.runpytest().assert_outcomes(passed=3)
    module(tester, upstream, "test_miss", body.format(mode="none", prompt="what is asked now"))
    before = upstream.count
    result = tester.runpytest()  # once: the cassettes exist, so none
    result.assert_outcomes(passed=2, failed=1)
    assert upstream.count == before + 1  # the recording test opened the network; the replaying ones closed it
    text = result.stdout.str()
    assert "FAILED test_miss.py::test_changed" in text
    assert "test_kept" not in text.split("short test summary")[1]
    assert text.count("no recorded exchange matches") == 1  # in the SDK's error: llmproxy does not repeat it
    assert "$.messages[0].content" in text
    assert "recorded 'what was recorded', received 'what is asked now'" in text


def test_a_client_that_swallows_the_miss_still_fails(tester: pytest.Pytester, upstream: Upstream):
    module(tester, upstream, "test_swallow", "def test_hides_it(llmproxy):\n    ask('x')\n")
    tester.runpytest().assert_outcomes(passed=1)
    body = """
def test_hides_it(llmproxy):
    try:
        ask("y")
    except anthropic.APIStatusError as error:
        assert error.status_code == 400
"""
    module(tester, upstream, "test_swallow", body)
    result = tester.runpytest("--llmproxy-mode", "none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*llmproxy: nothing recorded answers a request:*",
            "*miss: POST http://127.0.0.1:*/v1/messages: no recorded exchange*",
        ]
    )


def test_unused_exchanges_are_listed_and_fail_with_strict_unused(tester: pytest.Pytester, upstream: Upstream):
    body = """
def test_two_calls(llmproxy):
    for prompt in {prompts}:
        ask(prompt)
"""
    module(tester, upstream, "test_unused", body.format(prompts=["one", "two"]))
    tester.runpytest().assert_outcomes(passed=1)
    module(tester, upstream, "test_unused", body.format(prompts=["one"]))
    listed = tester.runpytest("--llmproxy-mode", "none")
    listed.assert_outcomes(passed=1)
    listed.stdout.fnmatch_lines(["*= llmproxy =*", "test_unused.py::test_two_calls: 1 unused*", "*exchange 2: POST*"])
    strict = tester.runpytest("--llmproxy-mode", "none", "--llmproxy-strict-unused")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(["*unused (--llmproxy-strict-unused): exchange 2: POST*"])


def test_rewrite_replaces_the_cassette_only_once_the_test_passed(tester: pytest.Pytester, upstream: Upstream):
    body = """
def test_rerecorded(llmproxy):
    assert llmproxy.mode == "{mode}"
    ask("tell me")
    ask("tell me again")
    assert {passes}
"""
    cassette = tester.path / "cassettes" / "test_rewrite" / "test_rerecorded.json"
    module(tester, upstream, "test_rewrite", body.format(mode="all", passes=True))
    tester.runpytest("--llmproxy-mode", "once").assert_outcomes(passed=1)
    first = exchanges(cassette)
    assert len(first) == 2

    module(tester, upstream, "test_rewrite", body.format(mode="rewrite", passes=False))
    tester.runpytest("--llmproxy-mode", "rewrite").assert_outcomes(failed=1)
    assert exchanges(cassette) == first  # a failed test keeps the recording it had

    module(tester, upstream, "test_rewrite", body.format(mode="rewrite", passes=True))
    tester.runpytest("--llmproxy-mode", "rewrite").assert_outcomes(passed=1)
    rewritten = exchanges(cassette)
    assert len(rewritten) == 2  # replaced, not appended to
    assert set(rewritten).isdisjoint(first)

    module(tester, upstream, "test_rewrite", body.format(mode="all", passes=True))
    tester.runpytest("--llmproxy-mode", "all").assert_outcomes(passed=1)
    appended = exchanges(cassette)  # all: appended
    assert appended[:2] == rewritten
    assert len(appended) == 4


def test_new_episodes_replays_what_it_has_and_records_the_rest(tester: pytest.Pytester, upstream: Upstream):
    body = """
def test_grows(llmproxy):
    for prompt in {prompts}:
        ask(prompt)
    assert [call.answered.value for call in llmproxy.calls] == {answered}
"""
    cassette = tester.path / "cassettes" / "test_episodes" / "test_grows.json"
    module(tester, upstream, "test_episodes", body.format(prompts=["first"], answered=["upstream"]))
    tester.runpytest().assert_outcomes(passed=1)
    module(tester, upstream, "test_episodes", body.format(prompts=["first", "next"], answered=["hit", "upstream"]))
    before = upstream.count
    tester.runpytest("--llmproxy-mode", "new_episodes").assert_outcomes(passed=1)
    assert upstream.count == before + 1
    assert len(exchanges(cassette)) == 2


def test_marker_arguments(tester: pytest.Pytester, upstream: Upstream):
    (tester.path / "expectations.json").write_text(
        json.dumps({"expectations": [{"match": {"turnIndex": 0}, "respond": {"text": "from the expectations"}}]})
    )
    body = """
@pytest.mark.llmproxy(expectations="expectations.json")
def test_mocked(llmproxy):
    assert ask("anything") == "from the expectations"
    assert llmproxy.mock_log[0]["answeredBy"]
    assert [call.answered.value for call in llmproxy.calls] == ["mock"]

@pytest.mark.llmproxy("shared")
def test_named_one(llmproxy):
    ask("named")

@pytest.mark.llmproxy(cassette="shared.json", mode="all")
def test_named_two(llmproxy):
    ask("named")
    assert llmproxy.cassette.name == "shared.json"

@pytest.mark.llmproxy(match=["$.max_tokens"])
def test_ignores_a_field(llmproxy):
    ask("ignored field")

@pytest.mark.llmproxy(mode="none", cassette="never-recorded")
def test_none_without_a_cassette(llmproxy):
    pass

@pytest.mark.llmproxy(moed="none")
def test_misspelt(llmproxy):
    pass
"""
    module(tester, upstream, "test_marker", body)
    result = tester.runpytest()
    result.assert_outcomes(passed=4, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*no cassette *never-recorded.json: record it with --llmproxy-mode once*",
            "*@pytest.mark.llmproxy: unknown argument 'moed' (did you mean 'mode'?)",
        ]
    )
    assert len(exchanges(tester.path / "cassettes" / "shared.json")) == 2  # recorded by both, in one file
    assert not (tester.path / "cassettes" / "test_marker" / "test_mocked.json").exists()  # nothing to record
    source = (tester.path / "test_marker.py").read_text().replace("max_tokens=32", "max_tokens=64")
    (tester.path / "test_marker.py").write_text(source)
    replayed = tester.runpytest("--llmproxy-mode", "none", "-k", "ignores_a_field")
    replayed.assert_outcomes(passed=1)


def test_async_clients_under_pytest_asyncio(tester: pytest.Pytester, upstream: Upstream):
    body = """
@pytest.mark.asyncio
async def test_async(llmproxy):
    async with anthropic.AsyncAnthropic(api_key="sk-ant-api03-test", base_url=UPSTREAM, max_retries=0) as client:
        message = await client.messages.create(
            model="claude-haiku-4-5", max_tokens=32, messages=[{"role": "user", "content": "async"}]
        )
    assert message.content[0].text.startswith("answer")
    assert llmproxy.calls[-1].answered.value in ("upstream", "hit")
"""
    module(tester, upstream, "test_async", body)
    tester.runpytest().assert_outcomes(passed=1)
    before = upstream.count
    tester.runpytest("--llmproxy-mode", "none").assert_outcomes(passed=1)
    assert upstream.count == before


def test_block_network_refuses_everything_but_loopback(tester: pytest.Pytester, upstream: Upstream):
    """Every way the socket module reaches out — connections, datagrams, forward and reverse name lookups, also
    from asyncio — with each attempt named; loopback, `localhost` and this machine's own name stay reachable."""
    body = """
import asyncio, socket

def udp():
    return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

def tcp(method, address):
    with socket.socket() as sock:
        return getattr(sock, method)(address)

def datagram(method, *args):
    with udp() as sock:
        return getattr(sock, method)(*args)

async def datagram_through_asyncio():  # the transport swallows the error: the attempt still fails the test
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_datagram_endpoint(asyncio.DatagramProtocol, family=socket.AF_INET)
    transport.sendto(b"x", ("192.0.2.1", 56))
    transport.close()

BLOCKED = {
    "create_connection": lambda: socket.create_connection(("example.com", 80), timeout=1),
    "connect": lambda: tcp("connect", ("192.0.2.1", 443)),
    "connect_ex": lambda: tcp("connect_ex", ("192.0.2.1", 444)),
    "sendto": lambda: datagram("sendto", b"x", ("192.0.2.1", 53)),
    "sendto_flags": lambda: datagram("sendto", b"x", 0, ("192.0.2.1", 54)),
    "sendmsg": lambda: datagram("sendmsg", [b"x"], [], 0, ("192.0.2.1", 55)),
    "gethostbyname": lambda: socket.gethostbyname("example.com"),
    "gethostbyname_ex": lambda: socket.gethostbyname_ex("example.org"),
    "gethostbyaddr": lambda: socket.gethostbyaddr("192.0.2.7"),
    "getnameinfo": lambda: socket.getnameinfo(("192.0.2.8", 80), 0),
    "asyncio_connection": lambda: asyncio.run(asyncio.open_connection("192.0.2.9", 443)),
    "asyncio_datagram": lambda: asyncio.run(datagram_through_asyncio()),
}

@pytest.mark.parametrize("way", BLOCKED)
def test_blocked(way):
    BLOCKED[way]()

def test_swallowed():
    try:
        socket.getaddrinfo("api.openai.com", 443)
    except Exception:
        pass

def test_loopback_is_reachable():
    assert socket.getaddrinfo("localhost", 80)
    assert socket.gethostbyname("localhost") == "127.0.0.1"
    assert "127.0.0.1" in socket.gethostbyname_ex("127.0.0.1")[2]
    assert socket.gethostbyaddr("127.0.0.1")
    assert socket.getnameinfo(("127.0.0.1", 80), 0)
    flags = socket.NI_NUMERICHOST | socket.NI_NUMERICSERV  # numbers only: no server is asked
    assert socket.getnameinfo(("192.0.2.1", 443), flags) == ("192.0.2.1", "443")
    assert socket.getfqdn()  # this machine's own name
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        socket.create_connection(server.getsockname()).close()
        with socket.socket() as client:
            assert client.connect_ex(server.getsockname()) == 0
    with udp() as receiver, udp() as sender:
        receiver.bind(("127.0.0.1", 0))
        sender.sendto(b"one", receiver.getsockname())
        sender.sendmsg([b"two"], [], 0, receiver.getsockname())
        assert [receiver.recv(8), receiver.recv(8)] == [b"one", b"two"]
"""
    module(tester, upstream, "test_block", body)
    result = tester.runpytest("--llmproxy-block-network", "-rf")
    result.assert_outcomes(passed=1, failed=13)
    blocked = "*NetworkBlocked: llmproxy blocked {}: --llmproxy-block-network lets a test that replays*"
    result.stdout.fnmatch_lines_random(
        [
            blocked.format("a name lookup (getaddrinfo) of example.com"),
            blocked.format("a connection to 192.0.2.1:443"),
            blocked.format("a connection to 192.0.2.1:444"),
            blocked.format("a datagram to 192.0.2.1:53"),
            blocked.format("a datagram to 192.0.2.1:54"),
            blocked.format("a datagram to 192.0.2.1:55"),
            blocked.format("a name lookup (gethostbyname) of example.com"),
            blocked.format("a name lookup (gethostbyname_ex) of example.org"),
            blocked.format("a name lookup (gethostbyaddr) of 192.0.2.7"),
            blocked.format("a reverse lookup (getnameinfo) of 192.0.2.8"),
            blocked.format("a connection to 192.0.2.9:443"),
            "*blocked: a datagram to 192.0.2.1:56",
            "*blocked: a name lookup (getaddrinfo) of api.openai.com",
        ]
    )
    assert "test_loopback_is_reachable" not in result.stdout.str().split("short test summary")[1]


def test_orphaned_cassettes_are_listed(tester: pytest.Pytester, upstream: Upstream):
    module(tester, upstream, "test_orphans", "def test_used(llmproxy):\n    ask('used')\n")
    tester.runpytest().assert_outcomes(passed=1)
    (tester.path / "cassettes" / "test_orphans" / "test_renamed_long_ago.json").write_text("{}")
    result = tester.runpytest("--llmproxy-check-orphans", "--llmproxy-mode", "none")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*1 cassette no collected test uses:*", "*orphan: cassettes*test_renamed_long_ago.json"]
    )
    assert "test_used.json" not in result.stdout.str()


def test_the_default_mode_is_none_in_ci_and_once_elsewhere():
    assert default_mode({}) == "once"
    assert default_mode({"CI": "true"}) == "none"
    assert default_mode({"GITHUB_ACTIONS": "true"}) == "none"
    assert default_mode({"CI": "0"}) == "once"
    assert default_mode({"CI": "false"}) == "once"
    assert tuple(RecordMode) == MODES  # the option's choices, written out so that pytest starts without the core


def test_loading_the_plugin_leaves_the_proxy_unloaded():
    """Every pytest run in an environment with llmproxy loads the plugin: it must not cost those runs seconds."""
    heavy = "('llmproxy.plan', 'llmproxy.providers', 'llmproxy.session', 'mitmproxy')"
    code = f"import sys, llmproxy.testing.plugin; print(sorted(m for m in sys.modules if m.startswith({heavy})))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_sdk_clients_in_the_test_and_in_its_subprocesses_go_through_the_proxy(tester: pytest.Pytester):
    """No base URL: the SDK's own https://api.anthropic.com, reached through HTTPS_PROXY, TLS verified against
    llmproxy's CA by way of SSL_CERT_FILE — set for the test's duration only, inherited by its subprocesses."""
    body = {"model": "claude-haiku-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "over TLS"}]}
    answer = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "replayed over TLS"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 12, "output_tokens": 4},
    }
    headers = (("content-type", "application/json"),)
    sent = json.dumps(body).encode()
    request = factory.request(sent, headers=headers)
    response = RawResponse(200, "OK", "HTTP/1.1", headers, json.dumps(answer).encode(), None, None)
    for test in ("test_in_process", "test_in_a_subprocess"):
        writer = CassetteWriter.open(tester.path / "cassettes" / "test_tls" / f"{test}.json", Redactor())
        writer.add(RawExchange(request, response, None, STARTED, 1.0, 2.0))
        writer.close()
    client = f"""
import anthropic
with anthropic.Anthropic(api_key="sk-ant-api03-test", max_retries=0) as client:
    message = client.messages.create(**{body!r})
assert message.content[0].text == "replayed over TLS", message
"""
    tester.makepyfile(
        test_tls=f"""
import os, subprocess, sys

def test_in_process(llmproxy):
    exec({client!r})
    assert llmproxy.calls[0].answered.value == "hit"
    assert os.environ["SSL_CERT_FILE"] == llmproxy.environment["SSL_CERT_FILE"]

def test_in_a_subprocess(llmproxy):
    subprocess.run([sys.executable, "-c", {client!r}], check=True)
    assert [call.answered.value for call in llmproxy.calls] == ["hit"]

def test_afterwards():
    assert "SSL_CERT_FILE" not in os.environ
    assert "HTTPS_PROXY" not in os.environ
"""
    )
    tester.runpytest("--llmproxy-mode", "none", "--llmproxy-block-network").assert_outcomes(passed=3)


def test_chaos_marker_injects_faults_for_its_test_only(tester: pytest.Pytester, upstream: Upstream):
    """`--fail-first 2` (a failRequestCount window of 529s) as the marker's chaos, over mocked answers: the SDK's
    own retries get past both, waiting the retry-after it was sent; the next test meets no fault."""
    (tester.path / "expectations.json").write_text(json.dumps({"expectations": [{"respond": {"text": "mocked"}}]}))
    fail_first = {"errorStatus": 529, "failRequestCount": 2, "retryAfter": 0.05}
    (tester.path / "chaos.json").write_text(json.dumps({"seed": 7, "rules": [{"chaos": fail_first}]}))
    body = f"""
@pytest.mark.llmproxy(expectations="expectations.json", chaos={{"rules": [{{"chaos": {fail_first!r}}}]}})
def test_retried(llmproxy):
    assert ask("hello", retries=2) == "mocked"
    assert [call.answered.value for call in llmproxy.calls] == ["injected", "injected", "mock"]
    assert [(o.fault.status, o.next.value, o.recovered) for o in llmproxy.injected] == [(529, "retried", True)] * 2
    assert all(o.retry_after >= 0.05 for o in llmproxy.injected)  # the SDK waited what retry-after-ms said

@pytest.mark.llmproxy(expectations="expectations.json", chaos="--fail-first 2 --retry-after 0.05 --seed 7")
def test_command_line_options(llmproxy):
    assert ask("hello", retries=2) == "mocked"
    assert [call.answered.value for call in llmproxy.calls] == ["injected", "injected", "mock"]

@pytest.mark.llmproxy(expectations="expectations.json", chaos="chaos.json")
def test_overloaded(llmproxy):
    with pytest.raises(anthropic.InternalServerError) as raised:
        ask("hello")
    assert raised.value.status_code == 529
    assert raised.value.body["error"]["type"] == "overloaded_error"
    assert [o.fault.kind.value for o in llmproxy.injected] == ["error"]

@pytest.mark.llmproxy(expectations="expectations.json")
def test_after_the_chaos(llmproxy):
    assert ask("hello") == "mocked"
    assert [call.answered.value for call in llmproxy.calls] == ["mock"] and llmproxy.injected == []

@pytest.mark.llmproxy(expectations="expectations.json", chaos={{"rules": [{{"chaos": {{"errorStatus": "x"}}}}]}})
def test_bad_chaos(llmproxy):
    pass

@pytest.mark.llmproxy(expectations="expectations.json", chaos="--fail-first none")
def test_bad_option(llmproxy):
    pass
"""
    module(tester, upstream, "test_chaos", body)
    before = upstream.count
    result = tester.runpytest()
    result.assert_outcomes(passed=4, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*llmproxy: chaos=: $.rules?0?.chaos.errorStatus: Input should be a valid integer*",
            "*llmproxy: chaos='--fail-first none': *'none' is not a valid integer*",
        ]
    )
    assert upstream.count == before  # mocked and injected: nothing reached the network


COPES = """
import socket

def closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]

def copes(prompt, base_url=UPSTREAM, timeout=60.0):
    # code under test that survives an API that does not answer: only llmproxy can tell the recording is not whole
    try:
        ask(prompt, base_url=base_url, timeout=timeout)
    except anthropic.APIError as error:
        return type(error).__name__
    return "answered"
"""


def test_a_request_the_upstream_never_answered_fails_the_test_and_is_not_recorded(
    tester: pytest.Pytester, upstream: Upstream
):
    """Refused, hung up on, timed out: vcrpy records nothing for a request that raised, and neither does the
    plugin — a cassette holding the failure would replay it as the answer, forever, and the test would pass."""
    body = """
def test_refused(llmproxy):
    assert copes("hello", base_url=f"http://127.0.0.1:{closed_port()}") == "InternalServerError"  # a 502

def test_hung_up(llmproxy):
    ask("answered, and not recorded either: the test's recording is not whole")
    assert copes("hang up") == "InternalServerError"

def test_timed_out(llmproxy):
    # the client stops waiting for the answer 2 s after its request went out (through a busy proxy, that may be late)
    timeout = anthropic.Timeout(60.0, read=2.0)
    assert copes("never answer", timeout=timeout) in ("APITimeoutError", "APIConnectionError")
"""
    module(tester, upstream, "test_down", COPES + body)
    for _ in range(2):  # recorded nothing, so the next run meets the upstream again, and fails again
        before = upstream.count
        result = tester.runpytest()
        result.assert_outcomes(failed=3)
        assert upstream.count == before + 3
        result.stdout.fnmatch_lines_random(
            [
                "*llmproxy: test_down.py::test_refused: no answer from the upstream to POST http://127.0.0.1:*/v1/messages"
                " (*Connect call failed*): cassettes/test_down/test_refused.json is not written*",
                "*llmproxy: test_down.py::test_hung_up: no answer from the upstream to POST http://127.0.0.1:*/v1/messages"
                " (server closed connection): cassettes/test_down/test_hung_up.json is not written*",
                "*llmproxy: test_down.py::test_timed_out: no answer from the upstream to POST http://127.0.0.1:*/v1/messages"
                " (Client disconnected*): cassettes/test_down/test_timed_out.json is not written*",
            ]
        )
        assert [path for path in tester.path.glob("cassettes/**/*") if path.is_file()] == []


def test_an_upstream_failure_leaves_the_cassette_as_it_was(tester: pytest.Pytester, upstream: Upstream):
    body = """
def test_grows(llmproxy):
    for prompt in {prompts}:
        copes(prompt)
"""
    cassette = tester.path / "cassettes" / "test_grows" / "test_grows.json"
    module(tester, upstream, "test_grows", COPES + body.format(prompts=["one"]))
    tester.runpytest().assert_outcomes(passed=1)
    recorded = cassette.read_bytes()
    module(tester, upstream, "test_grows", COPES + body.format(prompts=["one", "two", "hang up"]))
    for mode in ("new_episodes", "all", "rewrite"):
        result = tester.runpytest("--llmproxy-mode", mode)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "*test_grows.py::test_grows: no answer from the upstream to POST *:"
                " cassettes/test_grows/test_grows.json is left as it was*"
            ]
        )
        assert cassette.read_bytes() == recorded, mode
        assert not journal_path(cassette).exists()


def test_mocked_and_injected_answers_are_not_recorded(tester: pytest.Pytester, upstream: Upstream):
    """The expectations answered and chaos faulted: no cassette, and nothing 'unused' ever after. Chaos over the
    network: the upstream's answer alone — replayed under the same chaos, the faults come from the chaos again."""
    (tester.path / "expectations.json").write_text(json.dumps({"expectations": [{"respond": {"text": "mocked"}}]}))
    body = """
@pytest.mark.llmproxy(expectations="expectations.json", chaos="--fail-first 2 --retry-after 0.05")
def test_mocked(llmproxy):
    assert ask("hello", retries=2) == "mocked"

@pytest.mark.llmproxy(chaos="--fail-first 2 --retry-after 0.05")
def test_live(llmproxy):
    assert ask("hello", retries=2).startswith("answer")
    answered = "upstream" if llmproxy.mode == "all" else "hit"
    assert [call.answered.value for call in llmproxy.calls] == ["injected", "injected", answered]
"""
    module(tester, upstream, "test_faults", body)
    before = upstream.count
    tester.runpytest().assert_outcomes(passed=2)
    assert upstream.count == before + 1
    folder = tester.path / "cassettes" / "test_faults"
    assert sorted(path.name for path in folder.iterdir()) == ["test_live.json"]
    (recorded,) = json.loads((folder / "test_live.json").read_text())["exchanges"]
    assert recorded["response"]["status"] == 200
    assert "injected" not in recorded
    replayed = tester.runpytest("--llmproxy-mode", "none", "--llmproxy-strict-unused")
    replayed.assert_outcomes(passed=2)
    assert "unused" not in replayed.stdout.str()
    assert upstream.count == before + 1


KILLED = """
import os, signal

def test_killed(llmproxy):
    ask("one")
    if os.environ.get("STOP_THE_TEST"):
        os.kill(os.getpid(), getattr(signal, os.environ["STOP_THE_TEST"]))
    ask("two")
"""


def test_a_test_stopped_while_recording_leaves_no_cassette_to_replay(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    """Killed half-way (kill -9, a crashed xdist worker) or interrupted (Ctrl-C): what it recorded is no cassette,
    and the next run records the test again instead of replaying half of it; a cassette it had stays as it was."""
    module(tester, upstream, "test_kill", KILLED)
    cassette = tester.path / "cassettes" / "test_kill" / "test_killed.json"
    monkeypatch.setenv("STOP_THE_TEST", "SIGKILL")
    assert tester.runpytest_subprocess().ret == -signal.SIGKILL
    assert journal_path(cassette).exists()  # what the killed test recorded, never confirmed
    monkeypatch.delenv("STOP_THE_TEST")
    tester.runpytest().assert_outcomes(passed=1)  # once: recorded afresh, not replayed
    recorded = cassette.read_bytes()
    assert len(exchanges(cassette)) == 2

    monkeypatch.setenv("STOP_THE_TEST", "SIGINT")
    assert tester.runpytest_subprocess("--llmproxy-mode", "all").ret == pytest.ExitCode.INTERRUPTED
    assert cassette.read_bytes() == recorded
    assert not journal_path(cassette).exists()
    monkeypatch.setenv("STOP_THE_TEST", "SIGKILL")
    assert tester.runpytest_subprocess("--llmproxy-mode", "all").ret == -signal.SIGKILL
    monkeypatch.delenv("STOP_THE_TEST")
    assert len(exchanges(cassette)) == 2
    tester.runpytest("--llmproxy-mode", "none", "--llmproxy-strict-unused").assert_outcomes(passed=1)


SET_UP_ERRORS = {
    'expectaions="expectations.json"': "@pytest.mark.llmproxy: unknown argument 'expectaions' (did you mean"
    " 'expectations'?)",
    "cassete='shared'": "@pytest.mark.llmproxy: unknown argument 'cassete' (did you mean 'cassette'?)",
    "record='all'": "@pytest.mark.llmproxy: unknown argument 'record' (it takes cassette, mode, preset, match,"
    " expectations, chaos)",
    "'a', 'b'": "@pytest.mark.llmproxy takes at most one positional argument: the cassette",
    'mode="nonee"': "mode='nonee': expected one of none, once, new_episodes, all, rewrite (did you mean 'none'?)",
    'preset="claude"': "preset='claude': expected one of claude-code, codex, gemini-cli, opencode, default, none"
    " (did you mean 'claude-code'?)",
    "cassette=5": "cassette=5: expected a cassette's name or path",
    "expectations=5": "expectations=5: expected an expectations file's path",
    "match=5": "match=5: expected JSONPaths of request-body fields to ignore, or a MatchOptions",
    "match=['$..[']": "match=['$..[']: cannot read the JSON path '$..[' at '..['",
    'expectations="missing.json"': "*missing.json: cannot read the expectations file: No such file or directory",
    'expectations="broken.json"': "*broken.json: $.expectations[0].respnd: Extra inputs are not permitted",
    "chaos=42": "chaos=42: expected a chaos file's path, a dict or options (docs/chaos.md)",
    "chaos='--fial 500@1'": "chaos='--fial 500@1': no such option --fial (did you mean --fail?)",
    "'corrupt'": "*corrupt.json: invalid JSON at line 2, column 1: unexpected end of data",
}


def test_set_up_errors_are_one_line_without_llmproxy_source(tester: pytest.Pytester, upstream: Upstream):
    """Each bad marker argument or file fails its test's set-up with one line saying what is wrong — as pytest
    shows it by default (`--tb=auto`), with no line of llmproxy's own source above it."""
    (tester.path / "expectations.json").write_text(json.dumps({"expectations": [{"respond": {"text": "x"}}]}))
    (tester.path / "broken.json").write_text(json.dumps({"expectations": [{"respnd": {"text": "x"}}]}))
    (tester.path / "cassettes").mkdir()
    (tester.path / "cassettes" / "corrupt.json").write_text('{"llmproxy_cassette": 1, "exchanges": [\n')
    body = "".join(
        f"\n@pytest.mark.llmproxy({arguments})\ndef test_{number}(llmproxy):\n    pass\n"
        for number, arguments in enumerate(SET_UP_ERRORS)
    )
    body += "\n@pytest.mark.llmproxy(moed='all')\ndef test_marker_only():\n    pass\n"
    module(tester, upstream, "test_set_up", body)
    for options in ((), ("--llmproxy-check-orphans",)):
        result = tester.runpytest_subprocess(*options)
        result.assert_outcomes(errors=len(SET_UP_ERRORS) + 1)
        text = result.stdout.str()
        sections = re.split(r"\n_+ ERROR at setup of (\w+) _+\n", text.split("= ERRORS =", 1)[1])[1:]
        shown = dict(zip(sections[::2], (section.split("\n=", 1)[0] for section in sections[1::2]), strict=True))
        for number, message in enumerate(SET_UP_ERRORS.values()):  # "*": the path before it is the test's own
            line = shown[f"test_{number}"]
            assert line.endswith(message[1:]) if message.startswith("*") else line == f"llmproxy: {message}", line
        result.stdout.fnmatch_lines(["llmproxy: @pytest.mark.llmproxy: unknown argument 'moed' (did you mean 'mode'?)"])
        for internals in ("llmproxy/testing", "Traceback", "INTERNALERROR"):
            assert internals not in text


def test_bad_options_are_usage_errors(tester: pytest.Pytester, upstream: Upstream):
    module(tester, upstream, "test_options", "def test_one(llmproxy):\n    ask('one')\n")
    cases = {
        ("--llmproxy-cassette-dir", "test_options.py"): "ERROR: --llmproxy-cassette-dir test_options.py: not a"
        " directory (*test_options.py)",
        ("--llmproxy-cassette-dir", "nowhere", "--llmproxy-mode", "none"): "ERROR: --llmproxy-cassette-dir nowhere:"
        " no such directory (*nowhere), and --llmproxy-mode none: it only replays cassettes, it records none",
        ("--llmproxy-mode", "nonee"): "*argument --llmproxy-mode: invalid choice: 'nonee'*",
    }
    for options, message in cases.items():
        result = tester.runpytest_subprocess(*options)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, options
        result.stderr.fnmatch_lines([message])
        assert "Traceback" not in result.stderr.str()
