"""Where each agent keeps its logs (`--from AGENT`), and which agent wrote a file found in a folder."""

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from llmproxy.agent_logs.claude import is_claude_log
from llmproxy.agent_logs.codex import is_codex_log
from llmproxy.agent_logs.gemini import is_gemini_log
from llmproxy.agent_logs.opencode import is_opencode_message
from llmproxy.errors import LlmproxyError

AGENTS = ("claude", "codex", "gemini", "opencode")
PATTERNS = ("*.jsonl", "*.json", "opencode.db")  # what a folder is searched for, beside cassettes


def default_locations(agent: str, environ: dict[str, str] | None = None) -> list[Path]:
    """The folders (or database) where `agent` keeps its session logs, as its own overrides set them; only
    those that exist. Raises LlmproxyError when there is none."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    candidates = _LOCATIONS[agent](env, home)
    found = [path for path in candidates if path.exists()]
    if not found:
        raise LlmproxyError(f"--from {agent}: no logs at {' or '.join(map(str, candidates))}")
    return found


def _claude(env: dict[str, str] | os._Environ[str], home: Path) -> list[Path]:
    """CLAUDE_CONFIG_DIR may name several folders, comma-separated; without it, ~/.claude and, where newer
    versions keep it, ~/.config/claude."""
    configured = [Path(part.strip()) for part in env.get("CLAUDE_CONFIG_DIR", "").split(",") if part.strip()]
    folders = configured or [home / ".claude", Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "claude"]
    return [folder / "projects" for folder in folders]


def _codex(env: dict[str, str] | os._Environ[str], home: Path) -> list[Path]:
    root = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"
    return [root / "sessions", root / "archived_sessions"]


def _gemini(env: dict[str, str] | os._Environ[str], home: Path) -> list[Path]:
    root = Path(env["GEMINI_CLI_HOME"]) if env.get("GEMINI_CLI_HOME") else home
    return [root / ".gemini" / "tmp"]


def _opencode(env: dict[str, str] | os._Environ[str], home: Path) -> list[Path]:
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share") / "opencode"
    return [data / "opencode.db", data / "storage" / "message"]


_LOCATIONS: dict[str, Callable[[dict[str, str] | os._Environ[str], Path], list[Path]]] = {
    "claude": _claude,
    "codex": _codex,
    "gemini": _gemini,
    "opencode": _opencode,
}


def agent_of(path: Path) -> str | None:
    """The agent that wrote the file, from its name and first line; None for any other file."""
    if path.name == "opencode.db" or (path.suffix == ".json" and is_opencode_message(path)):
        return "opencode"
    if path.suffix == ".json":
        return "gemini" if path.name.startswith("session-") and path.parent.name == "chats" else None
    if path.suffix != ".jsonl":
        return None
    first = _first_entry(path)
    if first is None or ("seq" in first and "host" in first):  # a mock log
        return None
    if is_gemini_log(first):
        return "gemini"
    if is_codex_log(first):
        return "codex"
    return "claude" if is_claude_log(first) else None


def _first_entry(path: Path) -> dict[str, Any] | None:
    """The first JSON object among the file's first few lines (a damaged first line does not hide a log)."""
    try:
        with path.open("rb") as handle:
            for _, line in zip(range(_LOOKED_AT), handle, strict=False):
                try:
                    entry = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                return entry if isinstance(entry, dict) else None
    except OSError:
        return None
    return None


_LOOKED_AT = 5
