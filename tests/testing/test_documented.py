"""docs/pytest.md's complete example runs as written, both ways the page says it runs: recorded on a developer's
machine (the first run: `once`, no cassette yet), then replayed in CI (`CI=1`: `none`, no key, no network). The
Anthropic SDK in it reaches the stand-in upstream (tests/testing/upstream.py) through the plugin's proxy, pointed
there by ANTHROPIC_BASE_URL; the expectations file it names is written beside it."""

import json
import re
from pathlib import Path

import pytest

from tests.testing.upstream import Upstream

PAGE = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"


def example() -> str:
    section = PAGE.read_text().split("## A complete example", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    return code.group(1)


def documented_cassettes() -> list[str]:
    """The cassettes the page says the first run writes, as paths from the tests' folder."""
    listing = re.search(r"CI\nthen replays them with no key and no network:\n\n```\n(.*?)```", PAGE.read_text(), re.S)
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
    monkeypatch.setenv("ANTHROPIC_API_KEY", "no-key-in-ci")
    replayed = tester.runpytest("-p", "no:cacheprovider", "--llmproxy-block-network", "-rA")
    replayed.assert_outcomes(passed=6)
    assert upstream.count == before + 5  # nothing reached the network
