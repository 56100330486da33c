"""Regenerate tests/fixtures/agent_logs/: each real coding CLI (node_modules) run once through `llmproxy
record` against the scripted local upstream (tests/e2e/agent_runs.py), its session logs kept, redacted: the
temporary folder the run used becomes `/home/user`, and every text longer than 400 characters (system
prompts, instructions, tool definitions) is cut to a marker, so the fixtures hold the counts and ids the
tests read and little else. opencode's database is copied (`VACUUM INTO`, its write-ahead log folded in)
with only its session, message and part tables.

    .venv/bin/python scripts/capture_agent_logs.py [claude codex gemini opencode]
"""

import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.agent_runs import run_agent  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "agent_logs"
LONGEST = 400
_LOGS = {"claude": ".claude/projects", "codex": ".codex/sessions", "gemini": ".gemini/tmp"}


def main(agents: list[str]) -> None:
    for agent in agents or ["claude", "codex", "gemini", "opencode"]:
        with tempfile.TemporaryDirectory() as temporary:
            run = run_agent(agent, Path(temporary))
            if run.returncode != 0:
                raise SystemExit(f"{agent}: the run failed:\n{run.stderr[-2000:]}")
            capture(agent, run.home, temporary)


def capture(agent: str, home: Path, temporary: str) -> None:
    target = FIXTURES / agent
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if agent == "opencode":
        _database(home / ".local/share/opencode/opencode.db", target / "opencode.db", temporary)
    else:
        for log in sorted((home / _LOGS[agent]).rglob("*.jsonl")):
            lines = [_redacted(line, temporary) for line in log.read_bytes().splitlines() if line.strip()]
            (target / log.name).write_bytes(b"\n".join(lines) + b"\n")


def _redacted(data: bytes, temporary: str) -> bytes:
    value = orjson.loads(data.replace(temporary.encode(), b"/home/user"))
    return orjson.dumps(_cut(value), option=orjson.OPT_INDENT_2 if data.lstrip().startswith(b"{\n") else 0)


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LONGEST:
        return f"<{len(value)} characters cut>"
    if isinstance(value, list):
        return [_cut(item) for item in value]
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    return value


def _database(source: Path, target: Path, temporary: str) -> None:
    with sqlite3.connect(source) as database:
        database.execute("VACUUM INTO ?", (str(target),))
    with sqlite3.connect(target) as database:
        kept = {"session", "message", "part"}
        tables = [name for (name,) in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        database.execute("PRAGMA foreign_keys = OFF")
        for name in tables:
            if name not in kept and not name.startswith("sqlite_"):
                database.execute(f'DROP TABLE "{name}"')
        for name in kept:
            for _, column, kind, *_ in database.execute(f'PRAGMA table_info("{name}")').fetchall():
                if kind.lower() == "text":
                    update = f'UPDATE "{name}" SET "{column}" = replace("{column}", ?, ?)'
                    database.execute(update, (temporary, "/home/user"))
                    database.execute(update, (temporary.lstrip("/"), "home/user"))  # a path kept relative
    with sqlite3.connect(target) as database:
        database.execute("VACUUM")


if __name__ == "__main__":
    main(sys.argv[1:])
