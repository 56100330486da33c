"""What-if over a committed cassette: the call a budget or a quota would have refused, found offline."""

from decimal import Decimal
from pathlib import Path

from click.testing import CliRunner

from llmproxy.analysis.calls import RecordedCall
from llmproxy.analysis.sources import Recorded
from llmproxy.analysis.whatif import what_if
from llmproxy.cli import main
from llmproxy.intercept.budget import Spend
from llmproxy.intercept.faults import FaultKind
from llmproxy.intercept.rules import ChaosFile, shorthand_rules
from llmproxy.pricing import PriceBook

ROOT = Path(__file__).resolve().parents[2]
BLOAT = ROOT / "cassettes" / "report" / "output-token-bloat.json"  # 4 calls a second apart; the 3rd costs $0.0121


def calls() -> list[RecordedCall]:
    return Recorded([BLOAT], PriceBook()).calls


def test_a_budget_trips_at_the_first_call_after_it_is_spent() -> None:
    result = what_if(calls(), ChaosFile(budgetUsd=Decimal("0.01")))
    (trip,) = result.trips
    assert (trip.index, trip.fault.kind, trip.elapsed) == (4, FaultKind.BUDGET, 3.0)
    assert trip.fault.detail == "$0.0134 spent"
    assert result.lines()[1].startswith("  budget $0.01: refused at call 4 of 4 (exchange 4 in ")


def test_a_budget_that_is_never_spent_lets_every_call_through() -> None:
    result = what_if(calls(), ChaosFile(budgetUsd=Decimal("1")))
    assert result.trips == []
    assert result.lines()[1] == "  no limit would have tripped: every call would have been answered"


def test_an_rpm_quota_at_recorded_times_and_all_at_once() -> None:
    assert what_if(calls(), ChaosFile(rules=shorthand_rules(rpm=3))).trips[0].index == 4
    instant = what_if(calls(), ChaosFile(rules=shorthand_rules(rpm=2)), instant=True)
    assert [trip.index for trip in instant.trips] == [3, 4]
    assert "2 of 4 calls would have been refused, the first at call 3 of 4" in instant.lines()[1]


def test_a_token_quota_trips_after_the_call_that_spent_it() -> None:
    result = what_if(calls(), ChaosFile(rules=shorthand_rules(tpm=2500)))
    (trip,) = result.trips
    assert (trip.index, trip.fault.kind) == (4, FaultKind.TOKEN_QUOTA)
    assert trip.fault.detail == "2900 of 2500 tokens per 60000 ms used (cli)"


def what_if_cli(*limits: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["replay", "--cassette", str(BLOAT), "--what-if", *limits])
    return result.exit_code, result.stderr.splitlines()


def test_the_command_line_reports_the_call_a_sub_cent_budget_or_a_quota_refuses() -> None:
    code, lines = what_if_cli("--budget-usd", "0.001")
    assert code == 0
    assert lines[0] == "llmproxy replay: what-if over 4 recorded calls, at their recorded times:"
    assert lines[1] == (
        "llmproxy replay:   budget $0.001: 2 of 4 calls would have been refused, the first at call 3 of 4 "
        f"(exchange 3 in {BLOAT}), 2.0 s into the run: $0.0013 spent"
    )
    assert lines[2].endswith("after call 3 the recorded agent went on to its next request, and made 1 more call")
    code, lines = what_if_cli("--rpm", "2", "--instant")
    assert (code, lines[0]) == (0, "llmproxy replay: what-if over 4 recorded calls, all at once (--instant):")
    assert lines[1].startswith("llmproxy replay:   --rpm 2: 2 of 4 calls would have been refused, the first at call 3")
    code, lines = what_if_cli()
    assert code == 2
    assert lines[-1].endswith("--what-if needs a limit to try: --budget-usd, --rpm, --tpm, --tpd or --chaos")


def test_a_budget_and_a_spend_below_a_cent_keep_their_digits() -> None:
    assert Spend(Decimal("0.000021"), Decimal("0.005"), 0).describe() == "$0.000021 spent of the $0.005 budget"
    assert Spend(Decimal("1.0042"), Decimal("2"), 1).describe() == (
        "$1.0042 spent of the $2.00 budget; not in it: 1 call that could not be priced"
    )
