"""No silent limits: every report format and every gate covers every call unless the user asked for less, and
where less was covered — `--max-calls`, exchanges that could not be decoded, a display limit — each says so;
a gate that did not see everything fails unless `--allow-partial` lets it pass."""

import csv
import io
import json
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from llmproxy.analysis.render import render
from llmproxy.cli import main
from tests.analysis.reports import question, recorded, report_of
from tests.analysis.test_verify import verify

FORMATS = ("terminal", "markdown", "json", "csv", "html")


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    """300 one-off questions to claude-haiku-4-5 at $0.00035 each: $0.105 in all, $0.07 for the newest 200."""
    return recorded(tmp_path_factory.mktemp("long") / "big.json", (question(n) for n in range(300)))


def report_cli(*args: str) -> str:
    result = CliRunner().invoke(main, ["report", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_cost_gate_totals_every_call_of_a_long_run(long_run: str) -> None:
    code, out, err = verify("cost", long_run, "--max-usd", "0.1", "--json")
    assert code == 1, err
    assert err.splitlines()[0] == "llmproxy verify cost: estimated cost $0.1050 is above --max-usd $0.1000"
    verdict = json.loads(out)
    assert (verdict["checked"], verdict["totalCostUsd"], verdict["authoritative"]) == (300, "0.105", True)
    assert verify("cost", long_run, "--max-usd", "0.11")[0] == 0


def test_a_gate_told_to_see_fewer_calls_fails_unless_allowed_to(long_run: str) -> None:
    code, out, err = verify("cost", long_run, "--max-usd", "0.1", "--max-calls", "200", "--json")
    assert code == 1
    assert err == (
        "llmproxy verify cost: saw the newest 200 of 300 calls: --max-calls 200 left out the 100 oldest "
        "(--allow-partial to pass on what it saw)\n"
    )
    verdict = json.loads(out)
    assert verdict["authoritative"] is False
    assert verdict["coverage"] == {"calls": 200, "leftOut": 100, "undecodable": 0, "complete": False}

    code, out, err = verify("cost", long_run, "--max-usd", "0.1", "--max-calls", "200", "--allow-partial", "--json")
    assert code == 0
    assert json.loads(out)["authoritative"] is False
    assert err == (
        "llmproxy verify cost: passed on the newest 200 of 300 calls (--max-calls 200, --allow-partial):"
        " estimated cost $0.0700 of 200 calls, within --max-usd $0.1000\n"
    )
    for gate in (("tool-call", "--name", "Bash", "--at-most", "3"), ("cost", "--max-usd", "5")):
        assert verify(gate[0], long_run, *gate[1:], "--max-calls", "10")[0] == 1, gate


def test_a_gate_that_could_not_decode_an_exchange_fails_unless_allowed_to(tmp_path: Path, long_run: str) -> None:
    cassette = orjson.loads(Path(long_run).read_bytes())
    cassette["exchanges"] = cassette["exchanges"][:3]
    cassette["exchanges"][1]["response"]["body"]["json"]["content"] = 3  # its answer (and cost) cannot be read
    broken = tmp_path / "broken.json"
    broken.write_bytes(orjson.dumps(cassette))
    code, out, err = verify("cost", str(broken), "--max-usd", "1", "--json")
    assert code == 1
    assert err == (
        f"llmproxy verify cost: 1 exchange could not be decoded ({broken}: undecodable response 1); "
        "its calls were not seen (--allow-partial to pass on what it saw)\n"
    )
    assert json.loads(out)["coverage"] == {"calls": 2, "leftOut": 0, "undecodable": 1, "complete": False}
    assert verify("cost", str(broken), "--max-usd", "1", "--allow-partial")[0] == 0


def test_every_report_format_covers_every_call_by_default(long_run: str) -> None:
    shown = {fmt: report_cli(long_run, "--format", fmt) for fmt in FORMATS}
    assert len(orjson.loads(shown["json"])["calls"]) == 300
    rows = list(csv.reader(io.StringIO(shown["csv"], newline="")))
    assert len(rows[1 : rows.index([])]) == 300
    assert shown["markdown"].count("| claude-haiku-4-5 |") == 300
    assert shown["html"].count('<tr data-call="') == 300
    assert "\n300 claude-haiku-4-5 " in shown["terminal"]
    for fmt, text in shown.items():
        assert "left out" not in text.lower(), fmt


def test_every_report_format_says_what_max_calls_left_out(long_run: str) -> None:
    said = "the newest 100 of 300 calls: --max-calls 100 left out the 200 oldest"
    for fmt in ("terminal", "markdown", "html"):
        assert said in " ".join(report_cli(long_run, "--format", fmt, "--max-calls", "100").split()), fmt
    document = orjson.loads(report_cli(long_run, "--format", "json", "--max-calls", "100"))
    assert (document["filter"]["maxCalls"], document["filter"]["droppedCalls"], len(document["calls"])) == (
        100,
        200,
        100,
    )
    rows = list(csv.reader(io.StringIO(report_cli(long_run, "--format", "csv", "--max-calls", "100"), newline="")))
    assert ["selection", "max_calls", "100"] in rows
    assert ["selection", "left_out_calls", "200"] in rows


def test_the_terminal_says_how_many_opportunities_it_did_not_list() -> None:
    report = report_of("cassettes/report")
    assert len(report.signals) > 5
    text = render(report, "terminal")
    assert f"{len(report.signals) - 5} more opportunities not shown here" in " ".join(text.split())


def test_the_appendix_says_where_it_cut_a_long_text(tmp_path: Path) -> None:
    path = recorded(tmp_path / "long-text.json", [question(0, ask="word " * 1_000)])
    (message,) = report_of(path).appendix.conversations[0].messages
    assert message.text.endswith("… [cut: 2,000 of 5,000 characters shown]")
    assert "[cut: 2,000 of 5,000 characters shown]" in render(report_of(path), "markdown")
