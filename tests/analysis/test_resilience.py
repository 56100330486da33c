"""Injected faults in `llmproxy report` and the `llmproxy verify resilience` gate, over cassettes recorded
through `llmproxy record` with the official Anthropic SDK under `--fail 529@1` (scripts/record_examples.py):
in one the SDK retries twice and gets its answer, in the other it is refused a third time and gives up. What
the client got decides, each cassette judged on its own: a retry of another cassette's, or one that met an
error nobody injected, is no recovery."""

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from llmproxy.analysis.render.html import render_html
from llmproxy.analysis.render.markdown import render_markdown
from llmproxy.analysis.render.terminal import render_terminal
from tests.analysis.reports import ROOT, report_of
from tests.analysis.test_verify import crafted, verify

RECOVERED = "cassettes/chaos/recovered.json"
GAVE_UP = "cassettes/chaos/gave-up.json"
RULE = "--fail 529@1 --fail-first 2 --retry-after 0.5"


def test_the_report_lists_each_injected_fault_and_what_the_client_did_next() -> None:
    resilience = report_of(RECOVERED).resilience
    assert resilience is not None
    assert resilience.injected == {"error": 2}
    assert [(f.call, f.kind, f.status, f.rule, f.next) for f in resilience.faults] == [
        (1, "error", 529, RULE, "retried"),
        (2, "error", 529, RULE, "retried"),
    ]
    for fault in resilience.faults:
        assert fault.retriedAfterSeconds is not None
        assert fault.retriedAfterSeconds >= 0.5
        assert fault.honouredRetryAfter is True
        assert fault.recovered
    assert resilience.recovered
    assert resilience.verdict == "the run recovered: 2 of 2 faults retried"


def test_every_format_shows_the_injected_faults() -> None:
    report = report_of(RECOVERED)
    markdown = render_markdown(report)
    assert "## Injected faults" in markdown
    assert f"| 1 | error: status 529 | {RULE} | retried after " in markdown
    assert "(retry-after 0.5 s honoured), answered |" in markdown
    assert 'data-testid="injected" data-recovered="true"' in render_html(report)
    assert "Injected faults (error 2): the run recovered" in render_terminal(report, width=200)


def test_a_run_the_client_gave_up_on_did_not_recover() -> None:
    resilience = report_of(GAVE_UP).resilience
    assert resilience is not None
    assert [f.next for f in resilience.faults] == ["retried", "retried", "gave_up"]
    assert not any(f.recovered for f in resilience.faults)
    assert not resilience.recovered
    assert resilience.verdict == "the run did not recover: the client gave up on 1 request after 3 faults"


def test_a_run_without_injected_faults_has_no_such_section() -> None:
    report = report_of("cassettes/quickstart.json")
    assert report.resilience is None
    assert "Injected faults" not in render_markdown(report)


def test_the_gate_passes_a_recovered_run_and_fails_one_given_up_on() -> None:
    assert verify("resilience", RECOVERED)[0] == 0
    code, _, err = verify("resilience", GAVE_UP)
    assert code == 1
    assert err == (
        "llmproxy verify resilience: call 3: error: status 529 (--fail 529@1 --retry-after 0.5): "
        "the client gave up (no request followed)\n"
    )


def test_nothing_injected_is_could_not_check() -> None:
    code, _, err = verify("resilience", "cassettes/quickstart.json")
    assert code == 2
    assert "no fault was injected into these calls" in err


def test_require_retry_fails_a_refusal_the_client_carried_on_past(tmp_path: Path) -> None:
    def other_request_after_the_first(exchange: dict[str, Any]) -> None:
        if exchange["id"] > 1:  # no longer the same request: the client went on to something else
            exchange["model"] = exchange["request"]["body"]["json"]["model"] = "claude-sonnet-4-5"

    path = crafted(tmp_path, "carried-on.json", other_request_after_the_first, RECOVERED)
    assert verify("resilience", path)[0] == 0
    code, out, err = verify("resilience", path, "--require-retry", "--json")
    assert code == 1
    assert err.splitlines() == [
        f"llmproxy verify resilience: call 1: error: status 529 ({RULE}): "
        "not retried, the client carried on without the answer (--require-retry)"
    ]
    assert [fault["next"] for fault in orjson.loads(out)["faults"]] == ["carried_on", "retried"]


def started(exchange_id: int, after: float) -> Callable[[dict[str, Any]], None]:
    """An edit that starts exchange `exchange_id` of RECOVERED `after` seconds after the one before it."""
    exchanges = orjson.loads((ROOT / RECOVERED).read_bytes())["exchanges"]
    before = datetime.fromisoformat(exchanges[exchange_id - 2]["timings"]["started_at"])
    moment = (before + timedelta(seconds=after)).isoformat().replace("+00:00", "Z")

    def edit(exchange: dict[str, Any]) -> None:
        if exchange["id"] == exchange_id:
            exchange["timings"]["started_at"] = moment

    return edit


def test_honour_retry_after_fails_a_retry_that_came_too_soon(tmp_path: Path) -> None:
    path = crafted(tmp_path, "hurried.json", started(2, after=0.026), RECOVERED)
    assert verify("resilience", path)[0] == 0
    code, _, err = verify("resilience", path, "--honour-retry-after")
    assert code == 1
    assert "call 1: error: status 529" in err
    assert "(retry-after 0.5 s NOT honoured), faulted again (--honour-retry-after)" in err


def test_each_cassette_is_judged_on_its_own(tmp_path: Path) -> None:
    """gave-up.json's last fault is not retried by the first call of recovered.json, the same request though it
    is: a folder, or several files, are several runs."""
    gave_up = re.compile(
        r"llmproxy verify resilience: call \d+ \(cassettes/chaos/gave-up\.json\): error: status 529 \(.*\): "
        r"the client gave up \(no request followed\)\n"
    )
    for paths in (("cassettes/chaos",), ("cassettes",), (GAVE_UP, RECOVERED)):
        code, _, err = verify("resilience", *paths)
        assert code == 1, paths
        assert gave_up.fullmatch(err), err
    resilience = report_of(GAVE_UP, RECOVERED).resilience  # the calls in the order they were made
    assert resilience is not None
    assert not resilience.recovered
    assert [(f.call, f.next, f.recovered) for f in resilience.faults] == [
        (1, "retried", True),
        (2, "retried", True),
        (4, "retried", False),
        (5, "retried", False),
        (6, "gave_up", False),
    ]
    assert resilience.verdict == "the run did not recover: the client gave up on 1 request after 3 faults"
    again = crafted(tmp_path, "recovered-again.json", lambda exchange: None, RECOVERED)
    assert verify("resilience", RECOVERED, again)[0] == 0  # two runs, each recovered


def test_a_retry_that_met_an_error_nobody_injected_is_no_recovery(tmp_path: Path) -> None:
    retried = started(3, after=0.6)

    def upstream_error_on_the_last_retry(exchange: dict[str, Any]) -> None:
        retried(exchange)
        if exchange["id"] == 3:
            exchange["response"]["status"] = 500
            exchange["response"]["reason"] = "Internal Server Error"

    path = crafted(tmp_path, "upstream-error.json", upstream_error_on_the_last_retry, RECOVERED)
    code, _, err = verify("resilience", path)
    assert code == 1
    assert err.splitlines() == [
        f"llmproxy verify resilience: call 2: error: status 529 ({RULE}): retried after 0.60 s"
        " (retry-after 0.5 s honoured), failed again: status 500; no answer came after it"
    ]
    report = report_of(path)
    assert report.resilience is not None
    assert report.resilience.verdict == "the run did not recover: the client gave up on 1 request after 2 faults"
    assert "answered" not in render_markdown(report).split("## Injected faults")[1].split("\n## ")[0]
