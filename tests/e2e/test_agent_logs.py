"""The real coding CLIs' own logs, reported and reconciled with a recording of the same run: each CLI runs
one tool loop through `llmproxy record` against the scripted upstream, with HOME in a temporary folder;
`report --reconcile` of its logs and the cassette agrees call by call, and ccusage (package.json, run
offline) counts the same tokens as llmproxy for Claude Code and Codex where both count them."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.agent_runs import AgentRun, run_agent
from tests.e2e.clis import CLIS, FINAL_TEXT, ROOT

CCUSAGE = ROOT / "node_modules" / "@ccusage" / "ccusage-linux-x64" / "bin" / "ccusage"  # package.json
LOG_FOLDERS = {
    "claude": ".claude",
    "codex": ".codex/sessions",
    "gemini": ".gemini",
    "opencode": ".local/share/opencode",
}


@pytest.fixture(scope="module", params=["claude", "codex", "gemini", "opencode"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    agent = request.param
    if CLIS[agent].binary is None:
        pytest.skip(f"{agent} is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    done = run_agent(agent, tmp_path_factory.mktemp(agent))
    assert done.returncode == 0, done.stderr[-3000:]
    assert FINAL_TEXT in done.stdout
    return done


def llmproxy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "llmproxy", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
def test_the_log_reconciles_with_the_recording_call_by_call(run: AgentRun) -> None:
    logs = run.home / LOG_FOLDERS[run.agent]
    reconciled = llmproxy("report", "--reconcile", str(logs), str(run.cassette), "--json")
    assert reconciled.returncode == 0, reconciled.stdout + reconciled.stderr
    result = json.loads(reconciled.stdout)
    assert result["agrees"]
    assert not result["notRecorded"]
    assert len(result["matched"]) == 2  # the two turns of the tool loop
    assert [pair["matchedBy"] for pair in result["matched"]] == (
        ["response id"] * 2 if run.agent in ("claude", "codex") else ["tokens"] * 2
    )
    # what the log leaves out is named: opencode's title, the Gemini CLI's routing question
    purposes = {call["purpose"] for call in result["notInLog"]}
    assert purposes == {"claude": set(), "codex": set(), "gemini": {"side request (no tools offered)"}}.get(
        run.agent, {"title generation"}
    )

    reported = llmproxy("report", str(logs), "--json")
    assert reported.returncode == 0, reported.stderr
    totals = json.loads(reported.stdout)["totals"]
    assert totals["callCount"] == 2
    assert totals["inputTokens"] == sum(pair["log"]["tokens"]["input"] for pair in result["matched"])


@pytest.mark.e2e
def test_ccusage_counts_the_same_tokens(run: AgentRun, tmp_path: Path) -> None:
    """ccusage's `input` is the uncached input (llmproxy's input less cache reads and writes). Where the two
    differ, the difference is the documented one (docs/agent-logs.md#ccusage): ccusage takes the cache
    writes from the log's split by lifetime (`cache_creation`), which Claude Code writes as zeros when the
    API sent no split, and has no offline price for models newer than its release."""
    if run.agent not in ("claude", "codex"):
        pytest.skip("ccusage is compared on Claude Code and Codex logs")
    if not CCUSAGE.exists():
        pytest.skip("ccusage is not installed: scripts/setup.sh installs it from package.json (needs npm, Linux x64)")
    binary = tmp_path / "ccusage"  # npm keeps the binary's mode as packed, not executable: run a copy
    shutil.copy(CCUSAGE, binary)
    binary.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "HOME": str(run.home), "LANG": "C.UTF-8"}
    env |= {"CLAUDE_CONFIG_DIR": str(run.home / ".claude"), "CODEX_HOME": str(run.home / ".codex")}
    theirs = subprocess.run(
        [str(binary), run.agent, "session", "--offline", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert theirs.returncode == 0, theirs.stderr
    counted = json.loads(theirs.stdout)["totals"]
    ours = json.loads(llmproxy("report", str(run.home / LOG_FOLDERS[run.agent]), "--json").stdout)["totals"]
    uncached = ours["inputTokens"] - ours["cachedInputTokens"] - ours["cacheWriteTokens"]
    assert (counted["inputTokens"], counted["cacheReadTokens"]) == (uncached, ours["cachedInputTokens"])
    assert counted["outputTokens"] == ours["outputTokens"]
    if run.agent == "codex":
        assert counted["cacheCreationTokens"] == ours["cacheWriteTokens"] == 0
        assert round(counted["costUSD"], 7) == round(float(ours["estimatedCostUsd"]), 7)
    else:
        # the log's lifetime split is all zeros though the writes were not
        assert counted["cacheCreationTokens"] == 0 < ours["cacheWriteTokens"]
        assert counted["totalCost"] == 0  # no offline price for the model: ccusage leaves it out
        assert counted["unpricedModels"] == ours["models"]
