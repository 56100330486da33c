"""docs/pytest.md's examples run as written. The complete example, both ways the page says it runs: recorded on
a developer's machine (the first run: `once`, no cassette yet), then replayed in CI (`CI=1`: `none`, no key, no
network); the Anthropic SDK in it reaches the stand-in upstream (tests/testing/upstream.py) through the plugin's
proxy, pointed there by ANTHROPIC_BASE_URL, and the expectations file it names is written beside it. And the
day-to-day section, step by step, its commands as the page writes them (the stand-in's address put in for
the page's port 8000) and its output as the page shows it: record against a mapped stand-in, replay in CI with
no key, add a test, change a prompt, with a local service beside the model throughout."""

import json
import re
import shlex
from pathlib import Path

import pytest

from llmproxy.testing.keys import SDK_KEY_VARIABLES
from tests.testing.upstream import Upstream

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

PAGE = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"


def example() -> str:
    section = PAGE.read_text().split("## A complete example", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    return code.group(1)


def documented_cassettes() -> list[str]:
    """The cassettes the page says the first run writes, as paths from the tests' folder."""
    listing = re.search(
        r"CI\nthen replays them with no key .*? and no network:\n\n```\n(.*?)```", PAGE.read_text(), re.S
    )
    assert listing is not None
    return [line.removeprefix("tests/") for line in listing.group(1).splitlines()]


def test_the_complete_example_passes_when_recorded_and_again_in_ci(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    tester.makepyfile(test_agent=example())
    refusal = {"expectations": [{"respond": {"text": "I can't help with that."}}]}
    (tester.path / "expectations").mkdir()
    (tester.path / "expectations" / "refusal.json").write_text(json.dumps(refusal))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", upstream.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "D0cK3y_" * 12)
    before = upstream.count

    tester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=6)
    assert upstream.count == before + 5  # each test's call once (the refusal is mocked; the overloads injected)
    for cassette in documented_cassettes():
        assert (tester.path / cassette).is_file(), cassette

    monkeypatch.setenv("CI", "1")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replayed = tester.runpytest("-p", "no:cacheprovider", "--llmproxy-block-network", "-rA")
    replayed.assert_outcomes(passed=6)
    assert upstream.count == before + 5  # nothing reached the network


def day_to_day() -> tuple[str, list[tuple[str, str]]]:
    """The section's text, and its code blocks in order: (language, content)."""
    section = PAGE.read_text().split("## Day to day", 1)[1].split("\n## ", 1)[0]
    return section, re.findall(r"```(\w*)\n(.*?)```", section, re.S)


class Page:
    """Runs the section's commands in a pytester folder, one after another, as a developer and CI would."""

    def __init__(self, tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tester, self.upstream, self.monkeypatch = tester, upstream, monkeypatch

    def run(self, command: str) -> pytest.RunResult:
        """`VAR=value … pytest ARGS`: the variables for this command only."""
        words = shlex.split(command.replace("http://127.0.0.1:8000", self.upstream.url))
        with self.monkeypatch.context() as scoped:
            while "=" in words[0]:
                name, _, value = words.pop(0).partition("=")
                scoped.setenv(name, value)
            assert words[0] == "pytest", command
            return self.tester.runpytest("-p", "no:cacheprovider", *words[1:])


def shows(result: pytest.RunResult, output: str) -> None:
    """The run printed the page's output block, line by line, as the page shows it."""
    result.stdout.fnmatch_lines([line.replace("[", "[[]").replace("*", "[*]") for line in output.splitlines()])


def test_the_day_to_day_section_runs_as_written(
    tester: pytest.Pytester, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    for names in SDK_KEY_VARIABLES:  # no key anywhere but where the page gives one
        for name in names:
            monkeypatch.delenv(name, raising=False)
    section, blocks = day_to_day()
    assert [language for language, _ in blocks] == ["python", "sh", "", "sh", "python", "sh", "", "", "sh", ""]
    (module, record, recorded, ci, new_test, record_again, recorded_again, failed, rewrite, rewritten) = (
        text for _, text in blocks
    )
    path = tester.path / module.splitlines()[0].removeprefix("# ")
    path.parent.mkdir()
    path.write_text(module)
    page = Page(tester, upstream, monkeypatch)

    before = upstream.count
    result = page.run(record)
    result.assert_outcomes(passed=2)
    shows(result, recorded)
    assert upstream.count == before + 2
    cassettes = sorted((path.parent / "cassettes").rglob("*.json"))
    assert all("https://api.openai.com/v1/chat/completions" in cassette.read_text() for cassette in cassettes)
    assert not any("sk-for-the-stand-in" in cassette.read_text() for cassette in cassettes)

    def in_ci(**outcomes: int) -> pytest.RunResult:
        before = upstream.count
        result = page.run(ci)
        result.assert_outcomes(**outcomes)
        assert upstream.count == before  # no stand-in, no network: the cassettes answered
        return result

    in_ci(passed=2)  # with no key, the weather service reached in replay

    path.write_text(module + "\n\n" + new_test)
    result = page.run(record_again)
    result.assert_outcomes(passed=3)
    shows(result, recorded_again)
    in_ci(passed=3)

    change = re.search(r"`(ask\(.*?\))` becomes `(ask\(.*?\))`", section)
    assert change is not None
    old, new = change.groups()
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new))
    shows(in_ci(passed=2, failed=1), failed)
    result = page.run(rewrite)
    result.assert_outcomes(passed=1)
    shows(result, rewritten)
    in_ci(passed=3)
