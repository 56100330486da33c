"""Client presets: what a coding CLI changes in its requests from one run to the next, so replay can ignore it.

A preset names fields to drop (session and user ids, prompt-cache keys), anchors (patterns whose captured
value — the working directory, the CLI's home — is replaced wherever it appears, also in the dash-mangled
form CLIs use for project folders: every character but letters and digits a dash), and rewrites applied
to every string (dates, UUIDs, per-run hashes, git status), and lists whose order changes from run to run
(matched sorted). Presets are chosen by name (`--preset`) or
from the client's headers (its User-Agent first).
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from llmproxy.cassette import jsonpath

_DATE = (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>")
LONG_DATE = (
    re.compile(
        r"\b(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, )?"
        r"(?:January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2}, \d{4}\b"
    ),
    "<date>",
)
# JavaScript's Date.toDateString(): "Wed Nov 25 2026"
JS_DATE = (
    re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{2} \d{4}\b"),
    "<date>",
)
# ids are often prefixed (`msg_…`), so no word boundary: not inside a longer run of hex digits
_UUID = (re.compile(r"(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f])"), "<uuid>")


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    user_agent: re.Pattern[str]
    hint: tuple[str, re.Pattern[str]] | None = None  # another header that names the client (lower-case name)
    drop: tuple[jsonpath.Path, ...] = ()
    anchors: tuple[re.Pattern[str], ...] = ()  # group 1: a value to replace everywhere
    rewrites: tuple[tuple[re.Pattern[str], str], ...] = ()
    # rewrites made before the anchored values are replaced, for text that may hold one by coincidence
    first: tuple[tuple[re.Pattern[str], str], ...] = ()
    # lists whose order changes from run to run while what they hold does not: matched in a fixed order
    unordered: tuple[jsonpath.Path, ...] = ()
    # content lists that hold the results of tools run at once, in the order they finished: when a list holds
    # tool results only, matched in a fixed order (each names the call it answers)
    tool_results: tuple[jsonpath.Path, ...] = ()

    def apply(self, body: Any) -> Any:
        """The body with this client's run-to-run changes neutralised."""
        for path in self.drop:
            body = jsonpath.drop(body, path)
        for path in self.unordered:
            body = jsonpath.change(body, path, _in_a_fixed_order)
        for path in self.tool_results:
            body = jsonpath.change(body, path, _results_in_a_fixed_order)
        values: set[str] = set()
        _each_string(body, lambda text: values.update(_anchored(self.anchors, text)))
        mangled = {re.sub(r"[^A-Za-z0-9]", "-", value) for value in values}  # how CLIs name project folders
        replacements = sorted(values | mangled, key=len, reverse=True)

        def rewrite(text: str) -> str:
            for pattern, replacement in self.first:
                text = pattern.sub(replacement, text)
            for value in replacements:
                text = text.replace(value, "<volatile>")
            for pattern, replacement in self.rewrites:
                text = pattern.sub(replacement, text)
            return text

        return _map_strings(body, rewrite)


def _in_a_fixed_order(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return sorted(value, key=lambda item: orjson.dumps(item, option=orjson.OPT_SORT_KEYS))


def _results_in_a_fixed_order(value: Any) -> Any:
    """The tool results in a fixed order, each cache breakpoint left at the position it marks: the client puts
    it on the last block, whichever result that is."""
    if not isinstance(value, list) or not all(
        isinstance(item, dict) and item.get("type") == "tool_result" for item in value
    ):
        return value
    breakpoints = {at: item["cache_control"] for at, item in enumerate(value) if "cache_control" in item}
    results = _in_a_fixed_order([{k: v for k, v in item.items() if k != "cache_control"} for item in value])
    return [
        {**item, "cache_control": breakpoints[at]} if at in breakpoints else item for at, item in enumerate(results)
    ]


def _anchored(anchors: tuple[re.Pattern[str], ...], text: str) -> set[str]:
    return {match.group(1) for anchor in anchors for match in anchor.finditer(text) if len(match.group(1)) > 1}


def _each_string(value: Any, visit: Callable[[str], object]) -> None:
    if isinstance(value, str):
        visit(value)
    elif isinstance(value, list):
        for item in value:
            _each_string(item, visit)
    elif isinstance(value, dict):
        for item in value.values():
            _each_string(item, visit)


def _map_strings(value: Any, change: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_map_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {key: _map_strings(item, change) for key, item in value.items()}
    return value


PRESETS: Mapping[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            "claude-code",
            re.compile(r"^claude-cli/"),
            hint=("x-app", re.compile(r"^cli$")),
            drop=(jsonpath.parse("$.metadata.user_id"),),
            tool_results=(jsonpath.parse("$.messages[*].content"),),
            anchors=(
                re.compile(r"Primary working directory: (\S+)"),
                re.compile(r"(/[^\s`'\"]*?)/\.claude/"),
            ),
            rewrites=(
                _DATE,
                LONG_DATE,
                _UUID,
                (re.compile(r"\bcch=[0-9a-f]+"), "cch=<volatile>"),  # a per-run hash in the billing header
                # the machine it runs on: another laptop or CI runner must still match
                (re.compile(r"( - (?:Platform|Shell|OS Version|Is a git repository): )[^\n]*"), r"\1<volatile>"),
                (re.compile(r"gitStatus: [\s\S]*"), "gitStatus: <git status>"),
            ),
        ),
        Preset(
            "codex",
            re.compile(r"^codex"),
            hint=("originator", re.compile(r"^codex")),
            drop=(
                jsonpath.parse("$.prompt_cache_key"),
                jsonpath.parse("$.client_metadata"),
                # when each input item was made (a float: no rewrite reaches it)
                jsonpath.parse("$.input[*].internal_chat_message_metadata_passthrough.create_time"),
            ),
            anchors=(re.compile(r"<cwd>([^<]+)</cwd>"), re.compile(r"(/[^\s`'\"]*?)/skills/")),
            rewrites=(
                _DATE,
                LONG_DATE,
                _UUID,
                # the machine it runs on, in its environment context: another laptop or CI runner must still match
                (re.compile(r"<(shell|timezone)>[^<]*</\1>"), r"<\1><volatile></\1>"),
                # what Codex adds to a command's output: a random chunk id and how long it ran
                (re.compile(r"\bChunk ID: [0-9a-f]+"), "Chunk ID: <volatile>"),
                (re.compile(r"\bWall time: [0-9.]+ seconds"), "Wall time: <volatile>"),
            ),
        ),
        Preset(
            "gemini-cli",
            re.compile(r"^GeminiCLI(?:-\w+)?/"),  # GeminiCLI/0.61.0/…, or GeminiCLI-tui/… from its terminal UI
            drop=(jsonpath.parse("$.user_prompt_id"), jsonpath.parse("$.request.session_id")),
            # its MCP servers' tools, declared in the order the servers came up
            unordered=(jsonpath.parse("$.request.tools[*].functionDeclarations"),),
            anchors=(
                re.compile(r"Workspace Directories:\*\*\n  - (\S+)"),
                re.compile(r"(/[^\s`'\"]*?)/\.gemini/"),
            ),
            rewrites=(
                _DATE,
                LONG_DATE,
                _UUID,
                # what its shell tool adds to a command's output: the process group it ran in
                (re.compile(r"\bProcess Group PGID: \d+"), "Process Group PGID: <volatile>"),
                # where it is installed: its built-in skills are listed by path
                (re.compile(r"[^\s`'\"<>()]*/@google/gemini-cli/"), "<gemini-cli>/"),
            ),
            # its project folders, named after the working directory's name (`~/.gemini/tmp/<slug>`): first,
            # since `/tmp/<slug>` is also the working directory itself when that is a folder in /tmp
            first=((re.compile(r"(\.gemini/(?:tmp|history)/)[a-z0-9-]+"), r"\1<project>"),),
        ),
        Preset(
            "opencode",
            re.compile(r"^opencode/"),  # opencode/1.18.33 ai-sdk/… runtime/bun/…
            anchors=(
                re.compile(r"Working directory: (\S+)"),
                re.compile(r"Workspace root folder: (\S+)"),
                re.compile(r"(/[^\s`'\"]*?)/\.(?:config|local/share|cache)/opencode/"),
            ),
            rewrites=(
                _DATE,
                LONG_DATE,
                JS_DATE,
                _UUID,
                # the machine it runs on, from its <env> block
                (re.compile(r"(\n  (?:Is directory a git repo|Platform): )[^\n]*"), r"\1<volatile>"),
            ),
        ),
    )
}


# what `--preset` takes: a client's name, "default" (only what any client varies: `neutral.py`), or "none"
CHOICES = (*PRESETS, "default", "none")


def preset_for(headers: Mapping[str, str]) -> Preset | None:
    """The preset of the client that sent these headers (lower-case names): by its User-Agent, else by
    another header it sends (when a wrapper or gateway replaced the User-Agent)."""
    user_agent = headers.get("user-agent")
    if user_agent:
        chosen = next((preset for preset in PRESETS.values() if preset.user_agent.search(user_agent)), None)
        if chosen is not None:
            return chosen
    for preset in PRESETS.values():
        if preset.hint is not None and preset.hint[1].search(headers.get(preset.hint[0], "")):
            return preset
    return None
