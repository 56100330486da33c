"""Agents' log files → the answers they hold, each API answer counted once.

The same answer can be written more than once: a resumed or copied session repeats earlier answers with
their ids (counted where first found, in file order), and a Claude Code sidechain can replay its parent's
messages under a new request id (counted in the parent's file, whichever is read first). Every answer left
out is counted as a skip of the file that repeated it.
"""

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from llmproxy.agent_logs.claude import claude_entries
from llmproxy.agent_logs.codex import codex_entries
from llmproxy.agent_logs.entries import LogEntry, Skips
from llmproxy.agent_logs.gemini import gemini_entries
from llmproxy.agent_logs.opencode import opencode_entries

READERS: dict[str, Callable[[Path, Skips], list[LogEntry]]] = {
    "claude": claude_entries,
    "codex": codex_entries,
    "gemini": gemini_entries,
    "opencode": opencode_entries,
}
REPEATED = "answer repeated from another log (resumed, copied or replayed session)"


def read_logs(files: Sequence[tuple[Path, str]]) -> tuple[list[LogEntry], dict[str, Counter[str]]]:
    """Every answer in the files (each with the agent that wrote it), once, in file order; and what each file
    had that was not counted, by reason."""
    skipped: dict[str, Counter[str]] = {}
    kept: dict[tuple[str, ...], LogEntry] = {}
    by_message: dict[str, LogEntry] = {}  # Claude Code: message id → the entry counted for it
    for path, agent in files:
        skips = Skips()
        entries = READERS[agent](path, skips)
        repeated = 0
        for entry in entries:
            if entry.key in kept:
                repeated += 1
                continue
            earlier = by_message.get(entry.response_id or "") if entry.agent == "claude" else None
            if earlier is not None and (entry.sidechain or earlier.sidechain):
                repeated += 1  # a sidechain's replay of its parent's message: the parent's entry is kept
                if earlier.sidechain and not entry.sidechain:
                    del kept[earlier.key]
                    kept[entry.key] = by_message[entry.response_id or ""] = entry
                continue
            kept[entry.key] = entry
            if entry.agent == "claude" and entry.response_id:
                by_message[entry.response_id] = entry
        counted = skips.counted()
        if repeated:
            counted[REPEATED] = repeated
        skipped[str(path)] = counted
    return list(kept.values()), skipped
