"""`llmproxy report` over a folder of Claude Code session logs beside ccusage over the same folder, in one run
(docs/agent-logs.md#speed): goal, llmproxy within twice ccusage's time on 1 GB.

    .venv/bin/python scripts/bench/agent_logs.py [--megabytes 1024] [--keep DIR]

The folder is generated in the layout and line shapes Claude Code 2.x writes (tests/fixtures/agent_logs/
claude): projects of sessions of tool-loop turns, each turn a user line carrying a tool result (2–6 KB), an
attachment line, and the answer as two assistant lines (a text block, a tool-use block) repeating the message's
id, request and usage; one session in ten resumed (its first half copied into a new file), one in five with a
subagent's sidechain file. Both commands are measured whole, as a user runs them — `llmproxy report DIR
--format json -o /dev/null` and `ccusage claude session --offline --json` (CLAUDE_CONFIG_DIR set to the
folder) — by wall time and the child's CPU seconds and peak RSS; each once, ccusage first (the page cache
warm for both after generation). ccusage's native binary comes from node_modules (package.json), run as its
`npx ccusage` wrapper runs it.
"""

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CCUSAGE = ROOT / "node_modules" / "@ccusage" / "ccusage-linux-x64" / "bin" / "ccusage"  # package.json
TURNS = 60  # a session's tool-loop turns
MODELS = ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")


def generate(root: Path, megabytes: int) -> tuple[int, int]:
    """Sessions until the folder holds `megabytes`: the bytes written and the answers in them (counted once)."""
    rng = random.Random(7)
    written = answers = 0
    start = datetime(2026, 5, 1, tzinfo=UTC)
    session_number = 0
    while written < megabytes * 1_000_000:
        project = root / "projects" / f"-home-user-project{session_number // 50}"
        project.mkdir(parents=True, exist_ok=True)
        session = str(uuid.UUID(int=rng.getrandbits(128)))
        lines = list(_session(rng, session, start + timedelta(minutes=session_number), rng.choice(MODELS)))
        data = "\n".join(lines) + "\n"
        (project / f"{session}.jsonl").write_text(data)
        written += len(data)
        answers += TURNS
        if session_number % 10 == 3:  # resumed: the first half again, in a new session's file
            copy = "\n".join(lines[: len(lines) // 2]) + "\n"
            (project / f"{uuid.UUID(int=rng.getrandbits(128))}.jsonl").write_text(copy)
            written += len(copy)
        if session_number % 5 == 1:  # a subagent: its own answers, in the session's subagents folder
            sub = project / session / "subagents"
            sub.mkdir(parents=True)
            side = list(_session(rng, session, start + timedelta(minutes=session_number), MODELS[2], sidechain=True))
            (sub / f"agent-{session[:8]}.jsonl").write_text("\n".join(side[: len(side) // 3]) + "\n")
            written += sum(len(line) + 1 for line in side[: len(side) // 3])
            answers += TURNS // 3
        session_number += 1
    return written, answers


def _session(rng: random.Random, session: str, at: datetime, model: str, sidechain: bool = False) -> Iterator[str]:
    common = f'"sessionId":"{session}","version":"2.1.332","cwd":"/home/user/project"'
    common += f',"isSidechain":{str(sidechain).lower()}'
    cached = 0
    for turn in range(TURNS):
        moment = (at + timedelta(seconds=20 * turn)).isoformat().replace("+00:00", "Z")
        result = "x" * rng.randint(2_000, 6_000)
        yield (
            f'{{"parentUuid":null,{common},"type":"user","timestamp":"{moment}","uuid":"{uuid.uuid4()}",'
            f'"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{turn}",'
            f'"content":"{result}"}}]}}}}'
        )
        yield (
            f'{{{common},"type":"attachment","timestamp":"{moment}","uuid":"{uuid.uuid4()}",'
            f'"attachment":{{"type":"todo","content":"{"y" * 600}"}}}}'
        )
        message, request = f"msg_{uuid.uuid4().hex[:24]}", f"req_{uuid.uuid4().hex[:24]}"
        written = rng.randint(100, 2_000)
        usage = json.dumps(
            {
                "input_tokens": rng.randint(1, 20),
                "cache_creation_input_tokens": written,
                "cache_read_input_tokens": cached,
                "output_tokens": rng.randint(20, 600),
                "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0},
            },
            separators=(",", ":"),
        )
        cached += written
        for block in (
            '{"type":"text","text":"Looking at the file now."}',
            f'{{"type":"tool_use","id":"toolu_{turn}","name":"Read","input":{{"file_path":"/home/user/f{turn}.py"}}}}',
        ):
            yield (
                f'{{"parentUuid":null,{common},"type":"assistant","timestamp":"{moment}","uuid":"{uuid.uuid4()}",'
                f'"requestId":"{request}","message":{{"id":"{message}","type":"message","role":"assistant",'
                f'"model":"{model}","content":[{block}],"stop_reason":"tool_use","usage":{usage}}}}}'
            )


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one run of the command, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, after.ru_maxrss // 1024, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=int, default=1024)
    parser.add_argument("--keep", type=Path, help="generate here, and keep it (reused if it exists)")
    args = parser.parse_args()
    if not CCUSAGE.exists():
        raise SystemExit("ccusage is not installed: scripts/setup.sh installs it from package.json")
    root = args.keep or Path(tempfile.mkdtemp(prefix="agent-logs-bench-"))
    try:
        if not (root / "projects").exists():
            size, answers = generate(root, args.megabytes)
            print(f"generated {size / 1e6:,.0f} MB of Claude Code logs, {answers:,} answers, in {root}")
        env = {"PATH": os.environ["PATH"], "HOME": str(root), "CLAUDE_CONFIG_DIR": str(root), "LANG": "C.UTF-8"}
        binary = root / "ccusage"  # npm keeps the binary's mode as packed, not executable: run a copy
        shutil.copy(CCUSAGE, binary)
        binary.chmod(0o755)
        theirs = measure([str(binary), "claude", "session", "--offline", "--json"], env)
        output = Path(tempfile.mkstemp(suffix=".json")[1])
        report = [sys.executable, "-m", "llmproxy", "report", str(root / "projects"), "--format", "json"]
        ours = measure([*report, "-o", str(output)], env | {"PYTHONPATH": str(ROOT)})
        counted = json.loads(theirs[3])["totals"]
        totals = json.loads(output.read_text())["totals"]
        output.unlink()
        print(f"{'':10} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
        for name, (wall, cpu, peak, _) in (("ccusage", theirs), ("llmproxy", ours)):
            print(f"{name:10} {wall:8.2f} {cpu:8.2f} {peak:8}")
        print(f"llmproxy / ccusage wall time: {ours[0] / theirs[0]:.2f} (goal: at most 2)")
        uncached = totals["inputTokens"] - totals["cachedInputTokens"] - totals["cacheWriteTokens"]
        same = (uncached, totals["outputTokens"], totals["cachedInputTokens"], totals["cacheWriteTokens"]) == (
            counted["inputTokens"],
            counted["outputTokens"],
            counted["cacheReadTokens"],
            counted["cacheCreationTokens"],
        )
        print(f"calls: {totals['callCount']:,}; token totals equal to ccusage's: {same}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
