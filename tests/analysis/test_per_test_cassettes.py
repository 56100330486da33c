"""The report over a folder of per-test cassettes, as the pytest plugin writes them (suite.py records one): each
test is a session, and a signal tells a team what is waste in its suite — not that two tests asked the same
question, nor that a test did not need every tool its application offers."""

import subprocess
import sys
from pathlib import Path

import pytest

from llmproxy.analysis.report import Report, Signal
from tests.analysis.reports import report_of

UNUSED = "UNUSED_TOOL_SCHEMA"

pytestmark = pytest.mark.xdist_group("suite_cassettes")  # one worker records the suite, not each


def fired(report: Report, signal: str) -> Signal | None:
    return next((s for s in report.signals if s.id == signal), None)


def test_each_test_is_a_session(suite_cassettes: Path) -> None:
    report = report_of(str(suite_cassettes))
    assert len(report.sessions) == len(list(suite_cassettes.iterdir())) == 15
    assert {Path(session.id).name for session in report.sessions} == {p.name for p in suite_cassettes.iterdir()}


def test_a_tool_that_some_test_called_is_not_said_never_called(suite_cassettes: Path) -> None:
    """`get_weather` is called in the weather tests and not in the others: the application needs it. No test
    made the model call `search_docs`: that one is offered for nothing (or no test exercises it)."""
    report = report_of(str(suite_cassettes))
    called = {tool.name for row in report.calls for tool in row.toolCalls}
    assert called == {"get_weather"}
    unused = fired(report, UNUSED)
    assert unused is not None
    answered = [row.index for row in report.calls if row.status == 200 and row.definedToolNames]
    assert unused.affectedCalls == answered  # the two 529s of the chaos test billed nothing
    assert unused.detail.startswith(
        f"1 tool offered on {len(answered)} calls and never called in any of the 15 sessions (search_docs): about "
    )


def test_the_same_question_in_two_tests_is_not_a_repeated_tool_call(suite_cassettes: Path) -> None:
    """Five tests ask for the weather in Oslo and get the same `get_weather` call: each test asks once. Only
    test_weather_follow_up asks for the same call twice."""
    report = report_of(str(suite_cassettes))
    repeated = fired(report, "DETERMINISTIC_TOOL_CALL")
    assert repeated is not None
    assert {Path(report.calls[i - 1].session).name for i in repeated.affectedCalls} == {"test_weather_follow_up.json"}
    assert len(repeated.affectedCalls) == 2
    assert repeated.detail == (
        "2 calls asked for a tool call with the same name and arguments as another call of their session (get_weather)."
    )


def test_a_short_system_prompt_is_not_worth_caching(suite_cassettes: Path) -> None:
    """The suite's system prompt is a dozen tokens, far below what Claude Sonnet 4.5 (1,024) and OpenAI (1,024)
    cache: re-sending it is no finding."""
    report = report_of(str(suite_cassettes))
    assert fired(report, "REPEATED_SYSTEM_PROMPT") is None
    assert fired(report, "LOW_CACHE_HIT_RATE") is None


def test_llmproxy_report_over_the_cassettes_folder_says_so(suite_cassettes: Path) -> None:
    """As docs/pytest.md has it: `llmproxy report` over the project's cassette folder, from the project."""
    project = suite_cassettes.parent.parent
    run = subprocess.run(
        [sys.executable, "-m", "llmproxy", "report", "cassettes", "--format", "markdown"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "- Calls: 24 in 15 sessions, grouped by cassette" in run.stdout
    (unused,) = [line for line in run.stdout.splitlines() if "never called" in line]
    assert "tool offered on 24 calls and never called in any of the 15 sessions (search_docs)" in unused
    assert "REPEATED_SYSTEM_PROMPT" not in run.stdout
