"""Reports over coding agents' own session logs, in process, over fixtures the real CLIs wrote
(scripts/capture_agent_logs.py): each agent's own running totals equal the report's; an answer repeated by
a resumed session, a replaying sidechain or a refreshed Codex counter is counted once; a damaged line is a
counted skip naming its line; `--from` finds an agent's logs where its environment says."""

import contextlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from llmproxy.agent_logs.exchanges import logged_exchanges
from llmproxy.agent_logs.files import agent_of
from llmproxy.agent_logs.read import REPEATED
from llmproxy.analysis.sources import Recorded, cassette_files
from llmproxy.cli import main
from llmproxy.cli.explain import explain
from llmproxy.cli.report import report
from llmproxy.control.api import BASE, control_api
from llmproxy.control.at_rest import session_at_rest
from llmproxy.control.auth import Access
from llmproxy.pricing import PriceBook

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent_logs"
# none of the agents' own overrides from the environment the tests run in
UNSET: dict[str, str | None] = dict.fromkeys(("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _totals(recorded: Recorded) -> tuple[int, int, int, int]:
    calls = recorded.calls
    return (
        sum(call.usage.input_tokens for call in calls),
        sum(call.usage.cache_read_tokens for call in calls),
        sum(call.usage.cache_write_tokens for call in calls),
        sum(call.usage.output_tokens for call in calls),
    )


def test_claude_code_totals_equal_its_own_running_cost_state() -> None:
    (log,) = (FIXTURES / "claude").glob("*.jsonl")
    state = next(line for line in _lines(log) if line["type"] == "cost-state")
    (usage,) = state["modelUsage"].values()
    recorded = Recorded([log], PriceBook())
    read, write = usage["cacheReadInputTokens"], usage["cacheCreationInputTokens"]
    assert _totals(recorded) == (usage["inputTokens"] + read + write, read, write, usage["outputTokens"])
    spend = sum(call.cost.usd for call in recorded.calls if hasattr(call.cost, "usd"))
    assert round(float(spend), 7) == round(state["totalCostUSD"], 7)  # the same prices as Claude Code's own
    assert [call.tool_calls[0].name for call in recorded.calls if call.tool_calls] == ["Bash"]


def test_codex_totals_equal_its_thread_total() -> None:
    (log,) = (FIXTURES / "codex").glob("rollout-*.jsonl")
    counts = [line["payload"]["info"] for line in _lines(log) if line["payload"].get("type") == "token_count"]
    total = counts[-1]["total_token_usage"]
    recorded = Recorded([log], PriceBook())
    expected = (total["input_tokens"], total["cached_input_tokens"], 0, total["output_tokens"])
    assert _totals(recorded) == expected
    assert [call.model for call in recorded.calls] == ["gpt-5-codex"] * 2


def test_codex_without_usage_records_counts_each_moved_total_once(tmp_path: Path) -> None:
    """Versions before usage records: the token_count events, one repeated as the interface refreshes."""
    (log,) = (FIXTURES / "codex").glob("rollout-*.jsonl")
    lines = [line for line in log.read_bytes().splitlines() if b'"token_usage_record"' not in line]
    repeat = next(line for line in lines if b'"token_count"' in line)
    older = tmp_path / log.name
    older.write_bytes(b"\n".join([*lines, repeat]) + b"\n")
    assert _totals(Recorded([older], PriceBook())) == _totals(Recorded([log], PriceBook()))


def test_opencode_totals_equal_its_session_row() -> None:
    database = FIXTURES / "opencode" / "opencode.db"
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
        row = connection.execute(
            "SELECT tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, cost FROM session"
        ).fetchone()
    recorded = Recorded([database.parent], PriceBook())
    uncached, output, read, write, cost = row
    assert _totals(recorded) == (uncached + read + write, read, write, output)
    spend = sum(call.cost.usd for call in recorded.calls if hasattr(call.cost, "usd"))
    assert round(float(spend), 6) == round(cost, 6)
    # each step of a message is a call, with the text and tool calls of that step (its parts)
    assert [[tool.name for tool in call.tool_calls] for call in recorded.calls] == [["bash"], []]
    assert recorded.calls[1].output_text == "The command printed llmproxy-ok."


def test_gemini_cli_answers_are_read_once_though_rewritten() -> None:
    (log,) = (FIXTURES / "gemini").glob("*.jsonl")
    answers = {line["id"]: line for line in _lines(log) if line.get("type") == "gemini"}
    recorded = Recorded([log], PriceBook())
    assert len(recorded.calls) == len(answers) == 2  # the first answer is written twice (its tool's result)
    assert _totals(recorded)[3] == sum(a["tokens"]["output"] + a["tokens"]["thoughts"] for a in answers.values())


def test_a_resumed_copy_of_a_session_is_counted_once(tmp_path: Path) -> None:
    (log,) = (FIXTURES / "claude").glob("*.jsonl")
    shutil.copy(log, tmp_path / "a-first.jsonl")
    shutil.copy(log, tmp_path / "b-resumed.jsonl")
    recorded = Recorded([tmp_path], PriceBook())
    assert _totals(recorded) == _totals(Recorded([log], PriceBook()))
    resumed = next(source for source in recorded.sources if source.path.endswith("b-resumed.jsonl"))
    assert resumed.skipped[REPEATED] == 2


def test_a_sidechain_replaying_its_parent_is_counted_once_and_its_own_answers_too(tmp_path: Path) -> None:
    """A subagent's file (written first here) replays a parent's message under another request id, and adds
    an answer of its own: the parent's answer counts once, in the parent's file; the subagent's counts."""
    (log,) = (FIXTURES / "claude").glob("*.jsonl")
    parent = _lines(log)
    replayed = [
        line | {"isSidechain": True, "requestRef": "replay-" + str(line.get("requestRef"))}
        for line in parent
        if line["type"] == "assistant"
    ]
    own = replayed[-1] | {"message": replayed[-1]["message"] | {"id": "msg_subagent_own"}}
    folder = tmp_path / "project"
    (folder / "session" / "subagents").mkdir(parents=True)
    (folder / "session" / "subagents" / "agent-1.jsonl").write_bytes(
        b"\n".join(orjson.dumps(line) for line in [*replayed, own]) + b"\n"
    )
    shutil.copy(log, folder / "z-parent.jsonl")
    recorded = Recorded([folder], PriceBook())
    parents = [call for call in recorded.calls if call.source.endswith("z-parent.jsonl")]
    assert len(parents) == 2
    assert [call.source.endswith("agent-1.jsonl") for call in recorded.calls].count(True) == 1


def test_a_line_that_is_not_json_is_a_counted_skip_naming_its_line(tmp_path: Path) -> None:
    (log,) = (FIXTURES / "claude").glob("*.jsonl")
    lines = log.read_bytes().splitlines()
    damaged = tmp_path / log.name
    damaged.write_bytes(b"\n".join([*lines[:2], b'{"type": "assistant", "message": {"id', *lines[2:]]) + b"\n")
    recorded = Recorded([tmp_path], PriceBook())
    assert len(recorded.calls) == 2
    assert recorded.sources[0].skipped == {"not JSON (line 3)": 1}


def test_an_opencode_row_holding_json_that_is_no_object_is_a_counted_skip(tmp_path: Path) -> None:
    """As a log's line is: a message or part whose data is JSON but no object (a list) is named, not lost."""
    database = tmp_path / "opencode.db"
    shutil.copyfile(FIXTURES / "opencode" / "opencode.db", database)
    with contextlib.closing(sqlite3.connect(database)) as connection, connection:
        connection.execute("UPDATE message SET data = '[1]' WHERE rowid = 1")
        connection.execute("UPDATE part SET data = '[\"text\"]' WHERE rowid = 7")
    recorded = Recorded([database], PriceBook())
    assert recorded.sources[0].skipped == {"not JSON (line 1)": 1, "not JSON (part) (line 7)": 1}
    assert len(recorded.calls) == 2


@pytest.mark.parametrize(
    ("agent", "variable", "folder"),
    [
        ("claude", "CLAUDE_CONFIG_DIR", "claude-config/projects/-home-user-work"),
        ("codex", "CODEX_HOME", "codex-home/sessions/2026/11/29"),
    ],
)
def test_from_reads_the_agents_logs_where_its_environment_says(
    tmp_path: Path, agent: str, variable: str, folder: str
) -> None:
    target = tmp_path / folder
    target.mkdir(parents=True)
    for log in (FIXTURES / agent).glob("*.jsonl"):
        shutil.copy(log, target / log.name)
    root = tmp_path / folder.split("/")[0]
    env = UNSET | {variable: str(root), "HOME": str(tmp_path)}
    result = CliRunner().invoke(report, ["--from", agent, "--json"], env=env)
    assert result.exit_code == 0, result.output
    built = orjson.loads(result.output)
    assert built["totals"]["callCount"] == 2
    assert built["sources"][0]["path"].startswith(str(target))


def test_from_twice_reads_both_agents(tmp_path: Path) -> None:
    for agent, folder in (("claude", ".claude/projects/-home-user-work"), ("codex", ".codex/sessions/2026")):
        (tmp_path / folder).mkdir(parents=True)
        for log in (FIXTURES / agent).glob("*.jsonl"):
            shutil.copy(log, tmp_path / folder / log.name)
    both = ["--from", "claude", "--from", "codex", "--json"]
    result = CliRunner().invoke(report, both, env=UNSET | {"HOME": str(tmp_path)})
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.output)["totals"]["providers"] == ["anthropic", "openai"]


def test_the_dashboard_shows_the_logged_answers_as_the_report_counts_them() -> None:
    """`llmproxy ui LOGS`: each answer an exchange whose answer is the API's body for it, so the dashboard's
    report over the journal has the calls, tokens, costs and tool calls `llmproxy report` finds in the logs."""
    logs = [(path, agent_of(path)) for path in cassette_files([FIXTURES]) if agent_of(path) is not None]
    router = control_api(session_at_rest([], logged_exchanges(logs)))  # type: ignore[arg-type]
    answer = router.handle("GET", f"{BASE}/report?format=json", b"", Access.READ)
    assert answer.status == 200, answer.body
    shown = orjson.loads(answer.body)["totals"]
    result = CliRunner().invoke(report, [str(FIXTURES), "--json"])
    reported = orjson.loads(result.output)["totals"]
    kept = ("callCount", "inputTokens", "cachedInputTokens", "cacheWriteTokens", "outputTokens", "toolCallCount")
    assert {key: shown[key] for key in kept} == {key: reported[key] for key in kept}
    assert shown["estimatedCostUsd"] == reported["estimatedCostUsd"]


def _recording_of(logs: list[Path], cassette: Path) -> None:
    """A cassette of the API's answers to the logged ones (the body the API sends for each): the calls a
    recording of the same run holds, to reconcile the logs with."""
    exchanges = [
        exchange.model_dump(mode="json", by_alias=True, exclude_none=True)
        for _, found in logged_exchanges([(log, agent_of(log) or "") for log in logs])
        for exchange in found
    ]
    for number, exchange in enumerate(exchanges, 1):
        exchange["id"] = number
    cassette.write_bytes(orjson.dumps({"llmproxy_cassette": 1, "exchanges": exchanges}))


def test_reconcile_matches_by_response_id_and_names_what_differs(tmp_path: Path) -> None:
    (log,) = (FIXTURES / "claude").glob("*.jsonl")
    _recording_of([log], tmp_path / "run.json")
    agreed = CliRunner().invoke(report, ["--reconcile", str(log), str(tmp_path / "run.json"), "--json"])
    assert agreed.exit_code == 0, agreed.output
    result = orjson.loads(agreed.output)
    assert [pair["matchedBy"] for pair in result["matched"]] == ["response id"] * 2
    assert result["verdict"].startswith("agrees: 2 of 2 logged answers match")

    # the log says the last answer had one output token more than the wire
    lines = _lines(log)
    last = max(i for i, line in enumerate(lines) if line["type"] == "assistant")
    lines[last]["message"]["usage"]["output_tokens"] += 1
    changed = tmp_path / "logs" / log.name
    changed.parent.mkdir()
    changed.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    differs = CliRunner().invoke(report, ["--reconcile", str(changed.parent), str(tmp_path / "run.json")])
    assert differs.exit_code == 1
    assert differs.output.startswith("llmproxy report --reconcile: disagrees: 1 of 2 logged answers match")
    assert "DIFFERS (response id)" in differs.output


def test_reconcile_names_the_calls_the_log_lacks_and_the_answers_never_recorded(tmp_path: Path) -> None:
    """The Gemini CLI keeps its own ids: matched by tokens. A recorded call the log lacks is named; a logged
    answer with no recorded call fails the reconciliation."""
    (log,) = (FIXTURES / "gemini").glob("*.jsonl")
    _recording_of([log, *(FIXTURES / "claude").glob("*.jsonl")], tmp_path / "run.json")
    lacking = CliRunner().invoke(report, ["--reconcile", str(log), str(tmp_path / "run.json"), "--json"])
    assert lacking.exit_code == 0, lacking.output
    result = orjson.loads(lacking.output)
    assert [pair["matchedBy"] for pair in result["matched"]] == ["tokens"] * 2
    assert [call["purpose"] for call in result["notInLog"]] == ["side request (no tools offered)"] * 2

    _recording_of([], tmp_path / "empty.json")
    unrecorded = CliRunner().invoke(report, ["--reconcile", str(log), str(tmp_path / "empty.json"), "--json"])
    assert unrecorded.exit_code == 1
    assert len(orjson.loads(unrecorded.output)["notRecorded"]) == 2


def test_reconcile_needs_logs_and_a_cassette(tmp_path: Path) -> None:
    (log,) = (FIXTURES / "claude").glob("*.jsonl")
    refused = CliRunner().invoke(report, ["--reconcile", str(log)])
    assert refused.exit_code == 2
    assert "--reconcile needs an agent's logs and a cassette of the same run" in refused.output


def test_a_forked_codex_thread_replaying_its_parent_counts_the_parent_once(tmp_path: Path) -> None:
    """A forked or subagent thread's file starts with its own `session_meta`, then its parent's, then the
    parent's history again: what follows the parent's is the parent's, counted once."""
    (log,) = (FIXTURES / "codex").glob("rollout-*.jsonl")
    lines = [line for line in _lines(log) if line["type"] != "token_usage_record"]  # the older format
    parent = tmp_path / "rollout-parent.jsonl"
    parent.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    meta = lines[0]
    child_meta = meta | {"payload": meta["payload"] | {"id": "child-thread", "session_id": "child-thread"}}
    child = tmp_path / "rollout-child.jsonl"
    child.write_bytes(b"\n".join(orjson.dumps(line) for line in [child_meta, *lines]) + b"\n")
    recorded = Recorded([tmp_path], PriceBook())
    assert _totals(recorded) == _totals(Recorded([log], PriceBook()))
    assert sum(source.skipped[REPEATED] for source in recorded.sources) == 2  # where read second


def test_the_gemini_cli_whole_file_format_reads_as_its_lines_do(tmp_path: Path) -> None:
    """Before JSONL, the Gemini CLI wrote `chats/session-….json`: the header's fields and every message."""
    (log,) = (FIXTURES / "gemini").glob("*.jsonl")
    lines = _lines(log)
    messages = {line["id"]: line for line in lines if "id" in line and "type" in line}
    whole = tmp_path / "tmp" / "project" / "chats" / "session-2026-11-29T01-48-e99ba473.json"
    whole.parent.mkdir(parents=True)
    whole.write_bytes(orjson.dumps(lines[0] | {"messages": list(messages.values())}))
    assert _totals(Recorded([tmp_path], PriceBook())) == _totals(Recorded([log], PriceBook()))


def test_explain_lists_the_logged_calls_and_says_why_it_draws_no_graph() -> None:
    result = CliRunner().invoke(explain, [str(FIXTURES / "claude")])
    assert result.exit_code == 1
    assert "2 calls from" in result.stdout
    assert "→ Bash" in result.stdout
    assert result.stderr == (
        "llmproxy explain: no request kept (a log keeps only answers) or none that decodes to explain\n"
    )


def test_a_secret_in_a_logged_tool_call_never_reaches_the_dashboard(tmp_path: Path) -> None:
    secret = "sk-ant-api03-" + "Q7" * 43
    (log,) = (FIXTURES / "claude").glob("*.jsonl")
    text = log.read_text().replace("echo llmproxy-ok", f"curl -H 'x-api-key: {secret}' https://example.com")
    (tmp_path / log.name).write_text(text)
    logs = [(tmp_path / log.name, "claude")]
    router = control_api(session_at_rest([], logged_exchanges(logs)))  # type: ignore[arg-type]
    for path in ("journal", "report?format=json", "journal/1"):
        answer = router.handle("GET", f"{BASE}/{path}", b"", Access.READ)
        assert answer.status == 200, (path, answer.body)
        assert secret.encode() not in answer.body
    assert secret not in CliRunner().invoke(report, [str(tmp_path), "--json"]).output


def test_the_documented_commands_run_as_written(tmp_path: Path) -> None:
    """docs/agent-logs.md's commands, in a home holding Claude Code's and Codex's logs where they keep them
    (`~` is that home; LOGS and CASSETTE, the Claude Code log and a recording of its answers)."""
    home = tmp_path / "home"
    for agent, folder in (("claude", ".claude/projects/-home-user-work"), ("codex", ".codex/sessions/2026")):
        (home / folder).mkdir(parents=True)
        for log in (FIXTURES / agent).glob("*.jsonl"):
            shutil.copy(log, home / folder / log.name)
    (log,) = (FIXTURES / "claude").glob("*.jsonl")
    _recording_of([log], tmp_path / "run.json")
    page = (Path(__file__).resolve().parents[2] / "docs" / "agent-logs.md").read_text()
    block = page.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].split() for line in block.splitlines()]
    assert [words[:2] for words in commands] == [["llmproxy", "report"]] * 2 + [["llmproxy", "verify"]] + [
        ["llmproxy", "report"]
    ]
    for words in commands:
        argv = [
            {"LOGS": str(log), "CASSETTE": str(tmp_path / "run.json")}.get(word, word.replace("~", str(home)))
            for word in words[1:]
        ]
        result = CliRunner().invoke(main, argv, env=UNSET | {"HOME": str(home)})
        assert result.exit_code == 0, (words, result.output)
