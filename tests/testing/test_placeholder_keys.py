"""CI replays with no key: the official SDKs refuse to start without one ("Missing credentials", "Could not
resolve authentication method"), so a test that replays gets a placeholder for each provider's key variable
that is unset — never a real key, in the environment for the test's duration only, in no cassette."""

from pathlib import Path

import pytest

from llmproxy.testing.keys import PLACEHOLDER, SDK_KEY_VARIABLES, placeholder_keys
from tests.testing.upstream import Upstream

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY")

AGENT = """
import os
import anthropic, openai

def test_both_sdks(llmproxy):
    with openai.OpenAI(max_retries=0) as client:  # the key from OPENAI_API_KEY
        completion = client.chat.completions.create(model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}])
    with anthropic.Anthropic(max_retries=0) as client:  # the key from ANTHROPIC_API_KEY
        message = client.messages.create(
            model="claude-haiku-4-5", max_tokens=32, messages=[{"role": "user", "content": "hi"}]
        )
    assert completion.choices[0].message.content.startswith("answer")
    assert message.content[0].text.startswith("answer")
    with open("keys.txt", "w") as seen:
        seen.write(os.environ["OPENAI_API_KEY"] + " " + os.environ["ANTHROPIC_API_KEY"])

def test_afterwards():
    assert "OPENAI_API_KEY" not in os.environ or os.environ["OPENAI_API_KEY"].startswith("sk-proj-")
"""


def test_ci_replays_the_official_sdks_with_no_key_in_the_environment(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
):
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    tester.makepyfile(test_agent=AGENT)
    tester.makeini(
        "[pytest]\nfilterwarnings = ignore::DeprecationWarning\nasyncio_default_fixture_loop_scope = function\n"
        f"llmproxy_map =\n    api.openai.com={upstream.url}\n    api.anthropic.com={upstream.url}\n"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-" + "R3c0rd1ngK3y" * 4)  # recording: the developer's keys
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "R3c0rd1ngK3y" * 8)
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    cassettes = [path.read_text() for path in (tester.path / "cassettes").rglob("*.json")]
    assert cassettes
    assert not any("R3c0rd1ngK3y" in text for text in cassettes)

    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("CI", "1")
    before = upstream.count
    tester.runpytest("-p", "no:cacheprovider", "--llmproxy-block-network").assert_outcomes(passed=2)
    assert upstream.count == before
    assert (tester.path / "keys.txt").read_text() == f"{PLACEHOLDER} {PLACEHOLDER}"

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-mine")  # a key that is set is the test's own
    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=2)
    assert (tester.path / "keys.txt").read_text() == f"{PLACEHOLDER} sk-ant-api03-mine"


def test_a_recording_test_gets_no_placeholder(tester: pytest.Pytester, upstream: Upstream, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    tester.makepyfile(
        test_records="import os\n\ndef test_records(llmproxy):\n    assert 'OPENAI_API_KEY' not in os.environ\n"
    )
    tester.runpytest("-p", "no:cacheprovider", "--llmproxy-mode", "all").assert_outcomes(passed=1)


def test_one_placeholder_for_each_provider_whose_variables_are_all_unset():
    keys = placeholder_keys({"GOOGLE_API_KEY": "mine", "ANTHROPIC_AUTH_TOKEN": "token", "PATH": "/bin"})
    assert keys["OPENAI_API_KEY"] == PLACEHOLDER
    assert "GEMINI_API_KEY" not in keys  # google-genai would read GOOGLE_API_KEY, and warn of both
    assert "ANTHROPIC_API_KEY" not in keys  # the SDK authenticates with the token
    assert "GOOGLE_API_KEY" not in keys
    assert "ANTHROPIC_AUTH_TOKEN" not in keys
    assert placeholder_keys({})["GEMINI_API_KEY"] == PLACEHOLDER
    assert set(placeholder_keys({}).values()) == {PLACEHOLDER}


def test_the_page_names_each_variable_a_placeholder_goes_in_and_each_that_keeps_it():
    page = (Path(__file__).resolve().parents[2] / "docs" / "pytest.md").read_text()
    bullet = page.split("* **No key in CI.**", 1)[1].split("\n* **", 1)[0]
    assert f"`{PLACEHOLDER}`" in bullet
    for names in SDK_KEY_VARIABLES:
        for name in names:
            assert f"`{name}`" in bullet, name
