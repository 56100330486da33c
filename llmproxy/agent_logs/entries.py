"""One answer of the model as an agent's log keeps it, and the skips a reader counts on the way."""

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from llmproxy.model import Provider, Usage

_NAMED_LINES = 3  # a reason's first lines named in its skip count; the rest only counted


type Api = tuple[Provider, str]
"""Where an agent's calls go: the provider, and the URL its default configuration sends them to."""


@dataclass(frozen=True, slots=True)
class LoggedTool:
    id: str
    name: str
    arguments: Any  # as the log keeps them (an object; Codex keeps the JSON text, decoded when it parses)


@dataclass(slots=True)
class LogEntry:
    """One API answer as the agent logged it. Built up while a file is read (an agent may write one answer
    over several lines), then only read."""

    agent: str  # claude | codex | gemini | opencode
    source: str  # the file
    line: int  # where the answer's first line is (opencode: its row)
    session: str  # the agent's session (thread) id
    key: tuple[str, ...]  # equal keys: the same API answer, written again (a resumed or copied session)
    response_id: str | None  # the id the API gave the answer, where the log keeps it (msg_…, resp_…)
    started_at: datetime
    model: str | None
    provider: Provider
    url: str  # where the agent's default configuration sends the call (prices are found by vendor and model)
    usage: Usage
    tool_calls: list[LoggedTool] = field(default_factory=list)
    text: str = ""
    stop_reason: str | None = None
    sidechain: bool = False  # a Claude Code sidechain (a subagent's or /btw's turn)
    logged_cost: Decimal | None = None  # the cost the agent itself wrote (opencode), for comparison

    @classmethod
    def found(
        cls,
        agent: str,
        path: Path,
        line: int,
        session: str,
        key: tuple[str, ...],
        started_at: datetime,
        model: object,
        api: Api,
    ) -> "LogEntry":
        """An answer as a reader first meets it: what the log says of it is filled in as the reader goes on
        (its usage, text, tool calls). `model` as logged: anything but a string names none."""
        named = model if isinstance(model, str) else None
        return cls(agent, str(path), line, session, key, None, started_at, named, *api, Usage())


class Skips:
    """Lines a reader passed over, by reason, with the first few line numbers of each: a report names them."""

    def __init__(self) -> None:
        self._lines: dict[str, list[int]] = {}
        self._counts: Counter[str] = Counter()

    def add(self, reason: str, line: int) -> None:
        self._counts[reason] += 1
        named = self._lines.setdefault(reason, [])
        if len(named) < _NAMED_LINES:
            named.append(line)

    def counted(self) -> Counter[str]:
        """Each reason with the lines it names (`not JSON (line 7)`, `… (lines 7, 9, 12, …)`) → its count."""
        found: Counter[str] = Counter()
        for reason, count in self._counts.items():
            lines = self._lines[reason]
            named = ", ".join(map(str, lines)) + (", …" if count > len(lines) else "")
            found[f"{reason} ({'line' if count == 1 else 'lines'} {named})"] = count
        return found


def json_lines(path: Path, skips: Skips, wanted: tuple[bytes, ...] = ()) -> Iterator[tuple[int, dict[str, Any]]]:
    """The file's JSON objects, one a line, with their line numbers, read as a stream (memory holds one line).
    With `wanted`, a line holding none of those bytes is not parsed, only checked to be whole (`{…}`): a log
    is mostly lines a report has no use for, and finding a word is far cheaper than parsing. A line that is not
    a JSON object is counted in `skips` as "not JSON"."""
    holds = _finder(wanted)
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            if holds is not None and holds(line) is None:
                if not (line.startswith(b"{") and line.endswith(b"}")):
                    skips.add("not JSON", number)
                continue
            if (entry := json_object(line, skips, number)) is not None:
                yield number, entry


@functools.lru_cache(maxsize=8)
def _finder(words: tuple[bytes, ...]) -> Callable[[bytes], object] | None:
    """Whether a line holds one of the words, in one call (no Python loop over the words of every line)."""
    return re.compile(b"|".join(map(re.escape, words))).search if words else None


def json_object(data: bytes | str, skips: Skips, where: int, reason: str = "not JSON") -> dict[str, Any] | None:
    """The JSON object `data` holds; None, counted in `skips` (by `reason`, at line or row `where`), when it
    holds anything else."""
    try:
        found = orjson.loads(data)
    except orjson.JSONDecodeError:
        found = None
    if isinstance(found, dict):
        return found
    skips.add(reason, where)
    return None


def timestamp(text: object, fallback: datetime) -> datetime:
    """An ISO 8601 time (`2026-05-01T12:00:00.000Z`) or milliseconds since the epoch; `fallback` if neither."""
    if isinstance(text, str):
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return fallback
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    if isinstance(text, int | float) and not isinstance(text, bool):
        return datetime.fromtimestamp(text / 1000, UTC)
    return fallback


def count(value: object) -> int:
    """A token count as logged: a whole number, anything else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
