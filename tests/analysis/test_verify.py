"""`llmproxy verify` gates fail on crafted cassettes, pass on good ones, and say "could not check" (exit 2)
when there is nothing to judge — never a pass on an absence of evidence."""

import json
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from llmproxy.cli import main
from tests.analysis.reports import ROOT, at_root
from tests.conformance.server import LoopbackServer, Reply

CLEAN = "cassettes/report/clean.json"
JSON = {"content-type": "application/json"}


def verify(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    with at_root():
        result = CliRunner().invoke(main, ["verify", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def crafted(tmp_path: Path, name: str, edit: Any, source: str = CLEAN) -> str:
    cassette = orjson.loads((ROOT / source).read_bytes())
    for exchange in cassette["exchanges"]:
        edit(exchange)
    path = tmp_path / name
    path.write_bytes(orjson.dumps(cassette))
    return str(path)


def test_tool_call_passes_and_fails_with_one_line_each() -> None:
    assert (
        verify(
            "tool-call", "cassettes/claude-code-tool-loop.json", "--name", "Bash", "--args-regex", "echo llmproxy-ok"
        )[0]
        == 0
    )
    code, _, err = verify("tool-call", "cassettes/claude-code-tool-loop.json", "--name", "Write")
    assert code == 1
    assert err == "llmproxy verify tool-call: Write was called 0 times, fewer than --at-least 1\n"
    code, _, err = verify(
        "tool-call", "cassettes/report/deterministic-tool-call.json", "--name", "read_file", "--at-most", "2"
    )
    assert code == 1
    assert "called 3 times, more than --at-most 2" in err
    code, out, _ = verify("tool-call", "cassettes/codex-tool-loop.json", "--name", "exec_command", "--json")
    assert code == 0
    assert json.loads(out)["count"] == 1
    code, _, err = verify("tool-call", "cassettes/codex-tool-loop.json", "--name", "exec_command", "--at-least", "2")
    assert err == "llmproxy verify tool-call: exec_command was called 1 time, fewer than --at-least 2\n"


def test_tool_call_without_chat_calls_could_not_check(tmp_path: Path) -> None:
    cassette = orjson.loads((ROOT / "cassettes" / "claude-code-tool-loop.json").read_bytes())
    cassette["exchanges"] = [e for e in cassette["exchanges"] if e.get("operation") != "messages"]
    (tmp_path / "none.json").write_bytes(orjson.dumps(cassette))
    code, _, err = verify("tool-call", str(tmp_path / "none.json"), "--name", "Bash")
    assert code == 2
    assert "no chat calls" in err


def _answer(text: str) -> Any:
    def edit(exchange: dict[str, Any]) -> None:
        exchange["response"]["body"]["json"]["content"] = [{"type": "text", "text": text}]

    return edit


def test_structured_output_validates_each_answer(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}))
    good = crafted(tmp_path, "good.json", _answer('{"city": "Paris"}'))
    assert verify("structured-output", good, "--schema", str(schema))[0] == 0
    bad = crafted(tmp_path, "bad.json", _answer('{"city": 7}'))
    code, out, err = verify("structured-output", bad, "--schema", str(schema), "--json")
    assert code == 1
    assert err.splitlines()[0] == "llmproxy verify structured-output: call 1: $.city: 7 is not of type 'string'"
    assert (json.loads(out)["checked"], json.loads(out)["conforming"]) == (3, 0)
    prose = crafted(tmp_path, "prose.json", _answer("Paris, I think."))
    assert "the answer is not JSON" in verify("structured-output", prose, "--schema", str(schema))[2]
    tools_only = "cassettes/report/deterministic-tool-call.json"
    assert verify("structured-output", tools_only, "--schema", str(schema))[0] == 2  # nothing to check


def test_cost_gate(tmp_path: Path) -> None:
    assert verify("cost", CLEAN, "--max-usd", "0.01")[0] == 0  # $0.003005
    code, _, err = verify("cost", CLEAN, "--max-usd", "0.001")
    assert code == 1
    assert err == "llmproxy verify cost: estimated cost $0.0030 is above --max-usd $0.0010\n"
    assert verify("cost", CLEAN, "--max-usd", "0.01", "--price-as", "claude-opus-4-5")[0] == 1  # five times dearer

    def unknown(exchange: dict[str, Any]) -> None:
        exchange["model"] = exchange["request"]["body"]["json"]["model"] = "house-model-7"

    house = crafted(tmp_path, "house.json", unknown)
    code, out, err = verify("cost", house, "--max-usd", "1", "--json")
    assert code == 1
    assert "unpriced: call 1 (house-model-7)" in err
    assert json.loads(out)["authoritative"] is False
    assert verify("cost", house, "--max-usd", "1", "--allow-unpriced")[0] == 0
    assert verify("cost", CLEAN, "--max-usd", "a lot")[0] == 2


def test_report_gate_fails_on_a_regression(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    with at_root():
        assert CliRunner().invoke(main, ["report", CLEAN, "--format", "json", "-o", str(baseline)]).exit_code == 0
    limits = ("--max-grade-drop", "0", "--max-cost-increase", "10%", "--min-cache-hit", "0.6")
    assert verify("report", CLEAN, "--baseline", str(baseline), *limits)[0] == 0
    code, out, err = verify(
        "report", "cassettes/report/repeated-system-prompt.json", "--baseline", str(baseline), *limits, "--json"
    )
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 3
    assert lines[0] == "llmproxy verify report: grade fell from A to D (down 3 letters; --max-grade-drop 0)"
    assert lines[1] == (
        "llmproxy verify report: estimated cost rose +499% ($0.0030 → $0.0180; --max-cost-increase 10%)"
    )  # docs/verify.md shows these three lines
    assert lines[2] == "llmproxy verify report: cache-hit ratio 0% is below --min-cache-hit 0.6"
    assert set(json.loads(out)["newSignals"]) == {"LOW_CACHE_HIT_RATE", "REPEATED_SYSTEM_PROMPT"}


def _to(port: int) -> Any:
    def edit(exchange: dict[str, Any]) -> None:
        exchange["request"]["url"] = f"http://127.0.0.1:{port}/v1/messages"

    return edit


def test_drift_reports_changed_shapes_and_fails_closed(tmp_path: Path, loopback: LoopbackServer) -> None:
    cassette = crafted(tmp_path, "local.json", _to(loopback.port))
    recorded = orjson.loads((ROOT / CLEAN).read_bytes())["exchanges"][0]["response"]["body"]["json"]

    loopback.answer = Reply(200, JSON, orjson.dumps(recorded))
    assert verify("drift", cassette, "--live")[0] == 0

    changed = {**recorded, "usage": {**recorded["usage"], "output_tokens": "30"}, "service_tier": "standard"}
    loopback.answer = Reply(200, JSON, orjson.dumps(changed))
    code, out, err = verify("drift", cassette, "--live", "--json")
    assert code == 1
    first = json.loads(out)["details"][0]
    assert (first["addedPaths"], first["typeChangedPaths"]) == (["$.service_tier"], ["$.usage.output_tokens"])
    assert (
        err.splitlines()[0] == "llmproxy verify drift: exchange 1: added $.service_tier; retyped $.usage.output_tokens"
    )

    loopback.answer = Reply(500, JSON, b'{"error": "down"}')
    code, _, err = verify("drift", cassette, "--live")
    assert code == 2
    assert "could not check: the live answer was status 500" in err


def test_drift_without_a_way_to_check_is_never_a_pass(tmp_path: Path) -> None:
    assert verify("drift", CLEAN)[0] == 2  # not --live
    closed = crafted(tmp_path, "closed.json", _to(9))  # nothing listens on port 9
    code, _, err = verify("drift", closed, "--live")
    assert code == 2
    assert "could not reach 127.0.0.1" in err

    def redacted(exchange: dict[str, Any]) -> None:
        exchange["request"]["headers"].append("x-api-key: <redacted:sk-ant:0123abcd>")

    keyless = crafted(tmp_path, "keyless.json", redacted)  # api.anthropic.com, and no key: nothing is sent
    code, _, err = verify("drift", keyless, "--live", env={"ANTHROPIC_API_KEY": ""})
    assert code == 2
    assert "credentials for api.anthropic.com are redacted: set ANTHROPIC_API_KEY" in err


def test_tool_call_at_most_alone_needs_no_at_least() -> None:
    assert verify("tool-call", "cassettes/claude-code-tool-loop.json", "--name", "Write", "--at-most", "0")[0] == 0
    code, _, err = verify("tool-call", "cassettes/claude-code-tool-loop.json", "--name", "Bash", "--at-most", "0")
    assert code == 1
    assert err == "llmproxy verify tool-call: Bash was called 1 time, more than --at-most 0\n"
    code, _, err = verify("tool-call", CLEAN, "--name", "Bash", "--at-least", "3", "--at-most", "1")
    assert code == 2
    assert "--at-least 3 is more than --at-most 1" in err
