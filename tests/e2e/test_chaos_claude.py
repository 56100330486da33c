"""The real Claude Code CLI under injected overload, through `llmproxy record`: `--fail 529@1 --fail-first 2`
answers its first two model requests with Anthropic's 529 `overloaded_error` (and a short retry-after), and
Claude Code's own retry logic gets through to the local upstream, finishes its tool loop, and the cassette
shows the two injected 529s, then the answers."""

from pathlib import Path

import pytest

from llmproxy.cassette.store import load_cassette
from tests.e2e.clis import CLAUDE, FINAL_TEXT, record_scripted
from tests.e2e.test_replay_claude import claude_env

OVERLOADED = ("--fail", "529@1", "--fail-first", "2", "--retry-after", "0.1", "--seed", "7")


@pytest.mark.e2e
def test_claude_code_retries_two_injected_529s_and_finishes(tmp_path: Path) -> None:
    if CLAUDE.binary is None:
        pytest.skip("claude is not installed: scripts/setup.sh installs it from package.json (needs npm)")
    env = claude_env(tmp_path / "record", "sk-ant-test", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    run, cassette, upstream = record_scripted(CLAUDE, tmp_path, "api.anthropic.com", env, options=OVERLOADED)
    assert run.returncode == 0, run.stderr[-3000:]
    assert FINAL_TEXT in run.stdout
    assert len(upstream.bodies) == 2  # the faults never reached the upstream; both turns did
    messages = [e for e in load_cassette(cassette).exchanges if e.operation == "messages"]
    statuses = [e.response.status if e.response is not None else None for e in messages]
    assert statuses == [529, 529, 200, 200]
    first, second, answered, _ = messages
    for faulted in (first, second):
        assert [(i.kind, i.status, i.retry_after_s) for i in faulted.injected] == [("error", 529, 0.1)]
        assert faulted.injected[0].rule == "--fail 529@1 --fail-first 2 --retry-after 0.1"
        assert faulted.request.body == answered.request.body  # Claude Code sent the same request again
    assert not answered.injected
    assert "injected 2 faults (error 2), seed 7" in run.stderr
    assert run.stderr.count("retried after") == 2
    assert "the run recovered" in run.stderr
