"""The pytest plugin's proxy over the control API, run by pytester on test modules that use the official OpenAI
SDK: each test gets the typed client (`llmproxy_control`) scoped to its own node id, adds expectations over
REST, reads back its own journal and verifies it — alone and under pytest-xdist, where each worker's proxy has a
control port of its own. A test's chaos stays its marker's: the chaos endpoint only shows it."""

import json
import re
from pathlib import Path

import pytest

from tests.testing import conftest as plugin_tests
from tests.testing.upstream import Upstream

# the plugin's own tests' fixtures: a stand-in upstream, one CA, a pytester with no outer proxy or CI variable
llmproxy_home, tester, upstream = plugin_tests.llmproxy_home, plugin_tests.tester, plugin_tests.upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # mitmproxy's dependencies, when loaded
]

OPENAI_KEY = "sk-proj-" + "Pl4nt3dK3y" * 5
HEADER = """
import json, os, urllib.request
import openai, pytest
from llmproxy.control.client import Client, ControlError

UPSTREAM = "{url}"

def ask(prompt):
    with openai.OpenAI(api_key="{key}", base_url=UPSTREAM + "/v1", max_retries=0) as client:
        completion = client.chat.completions.create(
            model="gpt-4.1-mini", messages=[{{"role": "user", "content": prompt}}]
        )
    return completion.choices[0].message.content

def note(request, **facts):
    with open("notes.jsonl", "a") as file:
        file.write(json.dumps({{"test": request.node.nodeid, **facts}}) + "\\n")
"""

ISOLATED = """
@pytest.mark.parametrize("word", ["alpha", "beta", "gamma", "delta"])
def test_mocks_over_rest_and_reads_its_own_journal(llmproxy_control, request, word):
    match = {"latestMessageContains": word}
    (added,) = llmproxy_control.add_expectations({"expectations": [{"match": match, "respond": {"text": word}}]})
    assert ask(f"say {word}") == word
    assert ask(f"say {word} again") == word
    nodeid = request.node.nodeid
    assert llmproxy_control.test_id == os.environ["LLMPROXY_TEST_ID"] == nodeid
    (standing,) = llmproxy_control.expectations().expectations
    assert (standing.id, standing.test_id, standing.served) == (added, nodeid, 2)
    entries = llmproxy_control.journal().entries
    assert [(entry.source, entry.test_id, entry.model) for entry in entries] == [("mocked", nodeid, "gpt-4.1-mini")] * 2
    assert llmproxy_control.verify_requests({"latestMessageContains": "again"}, exactly=1).ok
    failed = llmproxy_control.verify_requests({"latestMessageContains": "never sent"})
    assert (failed.ok, failed.count, len(failed.closest)) == (False, 0, 2)
    note(request, control=os.environ["LLMPROXY_CONTROL_URL"], seqs=[entry.seq for entry in entries])

@pytest.mark.llmproxy(chaos={"rules": [{"chaos": {"errorStatus": 529, "failRequestCount": 1}}]})
def test_chaos_is_the_markers(llmproxy, llmproxy_control, request):
    llmproxy_control.add_expectations({"expectations": [{"respond": {"text": "after the fault"}}]})
    chaos = os.environ["LLMPROXY_CONTROL_URL"]
    headers = {"authorization": "Bearer " + os.environ["LLMPROXY_CONTROL_TOKEN"]}
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({})).open
    shown = json.load(direct(urllib.request.Request(chaos, headers=headers)))
    assert shown["rules"] == [{"chaos": {"errorStatus": 529, "failRequestCount": 1}}]
    put = urllib.request.Request(chaos, data=b'{"clear": true}', method="PUT", headers=headers)
    with pytest.raises(urllib.error.HTTPError) as refused:
        direct(put)
    assert refused.value.code == 409
    assert "its marker" in json.load(refused.value)["error"]
    with pytest.raises(openai.InternalServerError):
        ask("first")  # the marker's fault, the PUT notwithstanding
    assert ask("second") == "after the fault"
    sources = [entry.source for entry in llmproxy_control.journal().entries]
    assert sources == ["injected", "mocked"]
    assert [fault.fault.status for fault in llmproxy.injected] == [529]
    note(request, control=chaos)

def test_the_read_only_token_reads(llmproxy_control, request):
    reader = Client(os.environ["LLMPROXY_CONTROL_URL"], os.environ["LLMPROXY_CONTROL_TOKEN_READONLY"])
    assert reader.status().journal is not None
    with pytest.raises(ControlError) as refused:
        reader.add_expectations({"expectations": [{"respond": {"text": "no"}}]})
    assert refused.value.status == 403
    assert llmproxy_control.expectations().expectations == []
    note(request, control=os.environ["LLMPROXY_CONTROL_URL"])
"""


def module(tester: pytest.Pytester, upstream: Upstream, name: str, body: str) -> Path:
    return tester.makepyfile(**{name: HEADER.format(url=upstream.url, key=OPENAI_KEY) + body})


def notes(tester: pytest.Pytester) -> list[dict[str, object]]:
    path = tester.path / "notes.jsonl"
    found = [json.loads(line) for line in path.read_text().splitlines()]
    path.unlink()
    return found


def test_each_test_drives_its_own_mock_over_rest(tester: pytest.Pytester, upstream: Upstream) -> None:
    """Replaying (CI's mode), with no cassette: the tests mock over REST and nothing reaches the network."""
    module(tester, upstream, "test_isolated", ISOLATED)
    before = upstream.count
    tester.runpytest("--llmproxy-mode", "none", "--llmproxy-block-network").assert_outcomes(passed=6)
    assert upstream.count == before
    ran = notes(tester)
    assert len({note["control"] for note in ran}) == 1  # one proxy for the process
    numbered = [seq for note in ran for seq in note.get("seqs", [])]  # type: ignore[attr-defined]
    assert numbered == list(range(1, 9))  # one journal, each test reading only its own entries
    assert not (tester.path / "cassettes").exists()


def test_under_xdist_each_worker_has_its_own_control_port(tester: pytest.Pytester, upstream: Upstream) -> None:
    module(tester, upstream, "test_isolated", ISOLATED)
    before = upstream.count
    result = tester.runpytest_subprocess("--llmproxy-mode", "none", "-n", "2")
    result.assert_outcomes(passed=6)
    assert upstream.count == before
    assert len({note["control"] for note in notes(tester)}) == 2


def test_a_recording_test_mocks_some_requests_and_records_the_rest(tester: pytest.Pytester, upstream: Upstream) -> None:
    """What an expectation added over REST answers is not recorded; what it does not answer goes upstream and
    is, and neither fails the test as a miss."""
    body = """
def test_records(llmproxy, llmproxy_control, request):
    mocked = {"match": {"latestMessageContains": "mock"}, "respond": {"text": "mocked"}}
    llmproxy_control.add_expectations({"expectations": [mocked]})
    assert ask("mock this") == "mocked"
    assert ask("record this").startswith("answer ")
    sources = [entry.source for entry in llmproxy_control.journal().entries]
    assert sources == ["mocked", "live"]
    assert [call.answered.value for call in llmproxy.calls] == ["mock", "upstream"]

def test_without_the_control_fixture_still_journals(llmproxy, request):
    control = Client.from_environment()
    assert control.test_id == request.node.nodeid
    ask("journalled")
    (entry,) = control.journal().entries
    assert (entry.source, entry.test_id) == ("live", request.node.nodeid)
"""
    module(tester, upstream, "test_recording", body)
    before = upstream.count
    tester.runpytest("--llmproxy-mode", "once").assert_outcomes(passed=2)
    assert upstream.count == before + 2
    cassette = json.loads((tester.path / "cassettes" / "test_recording" / "test_records.json").read_text())
    assert [exchange["request"]["body"]["json"]["messages"][0]["content"] for exchange in cassette["exchanges"]] == [
        "record this"
    ]


def test_what_marker_expectations_pass_on_is_recorded_not_missed(tester: pytest.Pytester, upstream: Upstream) -> None:
    (tester.path / "expectations.json").write_text(
        json.dumps({"expectations": [{"match": {"latestMessageContains": "mock"}, "respond": {"text": "mocked"}}]})
    )
    body = """
@pytest.mark.llmproxy(expectations="expectations.json")
def test_records(llmproxy):
    assert ask("mock this") == "mocked"
    assert ask("record this").startswith("answer ")
    assert llmproxy.misses == []
"""
    module(tester, upstream, "test_marked", body)
    tester.runpytest("--llmproxy-mode", "once").assert_outcomes(passed=1)
    assert (tester.path / "cassettes" / "test_marked" / "test_records.json").is_file()


def test_the_pytest_pages_example_passes_on_a_developer_machine_and_in_ci(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/pytest.md's `llmproxy_control` example as written: first with a key and no cassette (`once`), then
    as CI runs it (`none`, no key, no network); everything it sends is mocked, so no cassette is written."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "pytest.md").read_text()
    section = page.split("## Driving the proxy from a test: `llmproxy_control`", 1)[1].split("\n## ", 1)[0]
    [example] = re.findall(r"```python\n(.*?)```", section, re.S)
    tester.makepyfile(test_support_bot=example)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    before = upstream.count
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "1")
    monkeypatch.delenv("OPENAI_API_KEY")
    tester.runpytest("-p", "no:cacheprovider", "--llmproxy-block-network").assert_outcomes(passed=1)
    assert upstream.count == before
    assert not list(tester.path.glob("cassettes/**/*.json"))
