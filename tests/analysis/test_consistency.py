"""No signal contradicts the report it is in (consistency.py), over realistic runs: a team's suite recorded
through the pytest plugin (one cassette per test), coding agents' recorded sessions, runs under chaos, the
crafted run of each signal — read as each grouping reads them."""

from pathlib import Path

import pytest

from llmproxy.analysis.sources import Grouping
from tests.analysis.consistency import assert_consistent
from tests.analysis.reports import CRAFTED_RUNS, ROOT, run_of

AGENTS = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "cassettes").glob("*.json"))
CHAOS = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "cassettes" / "chaos").glob("*.json"))
SUITE = "cassettes/report/test-suite"  # crafted, one cassette per test as the plugin names them
RUNS = [*AGENTS, *CHAOS, *CRAFTED_RUNS, SUITE, "cassettes"]


@pytest.mark.xdist_group("suite_cassettes")  # one worker records the suite, not each
@pytest.mark.parametrize("grouping", list(Grouping))
def test_the_report_over_a_per_test_folder_agrees_with_itself(suite_cassettes: Path, grouping: Grouping) -> None:
    assert_consistent(*run_of(str(suite_cassettes), grouping=grouping))


@pytest.mark.parametrize("grouping", list(Grouping))
@pytest.mark.parametrize("run", RUNS)
def test_the_report_over_a_recorded_run_agrees_with_itself(run: str, grouping: Grouping) -> None:
    assert_consistent(*run_of(run, grouping=grouping))


def test_the_runs_cover_what_the_consistency_checks_read() -> None:
    """Between them, the runs hold agents, faults and every signal (else the checks above would prove little)."""
    assert len(AGENTS) >= 4
    assert len(CHAOS) >= 2
    fired = {signal.id for run in RUNS for signal in run_of(run)[0].signals}
    assert len(fired) == 9
