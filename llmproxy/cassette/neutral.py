"""The default preset: what any client's requests hold because of where and when it ran, neutralised for matching.

A coding CLI puts its working directory and HOME into its prompts, the time into its context and fresh ids
into its metadata; replayed from another folder, with another HOME, on another day, every request would
miss. Whatever the client — one with a preset of its own (`presets.py`) or one nobody wrote a preset for —
replay compares requests with these neutralised:

* the run's places (`Places`: the working directory and HOME of llmproxy, which the command it runs
  inherits; of the recording, as the cassette keeps them, and of the replay) wherever they appear, inside
  longer strings too: absolute (and resolved through symbolic links), under HOME as `~/…`, HOME relative to
  the working directory (`../../homes/x`), and in the dash-mangled form CLIs name project folders with;
* ISO-8601 dates and date-times at any precision (`2026-11-28`, `…T22:16:41.123Z`), written-out dates
  (`November 28, 2026`, `Sat Nov 28 2026`), times of day with seconds or AM/PM;
* UUID-shaped and long hexadecimal ids in the fields that name a run's ids (`session_id`, `message_id`,
  `user_id`, …) and in any `metadata` object; a UUID as a folder or file name under a place, anywhere
  (`~/.copilot/session-state/<uuid>/`: a CLI's per-run state folder);
* output budgets (`max_tokens` and its kin) are compared apart: they may differ by as many as the characters
  of places neutralised in either request (`budgets_fit`), since clients that size the answer to what is
  left of the context window derive them from the prompt's length, which the places change.

The cassette keeps what was sent; only the comparison sees this, and a miss's diagnostic shows the
neutralised forms (`<cwd>`, `<home>`, `<datetime>`…). A client's own preset is applied first, this after;
`--preset default` applies this alone, `--preset none` compares requests as sent.
"""

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ahocorasick_rs

from llmproxy.cassette.model import Places
from llmproxy.cassette.presets import JS_DATE, LONG_DATE

_DATETIME = re.compile(
    r"\b\d{4}-(?:0\d|1[0-2])-[0-3]\d"
    r"(?:[T ][0-2]\d:[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?(?:Z|[+-][0-2]\d:?[0-5]\d)?)?\b"
)
_DATES = (LONG_DATE, JS_DATE)  # "November 28, 2026", "Sat Nov 28 2026"
_TIME = re.compile(r"\b[0-2]?\d:[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?(?:\s?[AaPp][Mm]\b)?|\s?[AaPp][Mm]\b)")
_UUID = re.compile(r"(?<![0-9A-Fa-f])[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}(?![0-9A-Fa-f])")
# a UUID as a folder or file name in a path under a place already neutralised: `<home>/.x/state/<uuid>/plan.md`
_PLACED_UUID = re.compile(r"(<(?:cwd|home)>(?:/[^\s/\"'`]+)*?/)" + _UUID.pattern)
_HEX_ID = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{16,}(?![0-9A-Za-z])")
# field names (lower case, without `_` and `-`) whose values are a run's ids
_ID_FIELDS = frozenset(
    {
        "anonymousid",
        "chatid",
        "clientrequestid",
        "conversationid",
        "deviceid",
        "installationid",
        "interactionid",
        "machineid",
        "messageid",
        "promptcachekey",
        "promptid",
        "requestid",
        "runid",
        "sessionid",
        "spanid",
        "taskid",
        "threadid",
        "traceid",
        "turnid",
        "userid",
        "userpromptid",
    }
)
_BUDGETS = frozenset(
    {"max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens", "maxTokens", "num_predict"}
)
_BUDGET_DEPTH = 2  # `$.request.generationConfig.maxOutputTokens` is as deep as they are
# a place is a whole path: not the start of a longer name, nor the end of one (`/tmp/a` is not in `/tmp/ab`)
_BEFORE = r"(?<![A-Za-z0-9_.~-])"
_RELATIVE_BEFORE = r"(?<![/:])"
_AFTER = r"(?:(?<=/\.)|(?![A-Za-z0-9_-]|\.[A-Za-z0-9_]))"
_MANGLED_MIN = 8  # shorter dash-mangled forms (`-tmp-a`) read like command-line flags


# one place in a request's key: a run started in HOME shows both as `<cwd>`, another shows HOME as `<home>`
ONE_PLACE = (b"<home>", b"<cwd>")


def here() -> Places | None:
    """llmproxy's working directory and HOME: the command it runs inherits both (None when the working
    directory is gone)."""
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    return Places(cwd=cwd, home=os.environ.get("HOME") or None)


@dataclass(frozen=True, slots=True)
class _Forms:
    pattern: re.Pattern[str] | None  # every form of the places, longest first
    tokens: dict[str, str]  # a form → what replaces it
    # the forms in UTF-8 and JSON's escaped slash, found in one pass: a body holding none of them mentions no place
    anywhere: ahocorasick_rs.BytesAhoCorasick | None = None


@functools.lru_cache(maxsize=64)
def _forms(cwd: str, home: str | None) -> _Forms:
    forms: dict[str, str] = {}
    relatives: set[str] = set()  # relative to the working directory: a path's start, not inside one

    def add(value: str, token: str) -> None:
        if len(value) > 1 and value not in forms:
            forms[value] = token

    cwds = [path for path in dict.fromkeys((cwd, os.path.realpath(cwd))) if path != "/"]
    homes = [path for path in dict.fromkeys((home, os.path.realpath(home) if home else None)) if path and path != "/"]
    for path in cwds:
        add(path, "<cwd>")
    for path in homes:
        add(path, "<home>")
    for path in cwds:
        for home_path in homes:
            if path.startswith(home_path + "/"):
                add("~/" + path[len(home_path) + 1 :], "<cwd>")
            relative = os.path.relpath(home_path, path)
            if relative.startswith(".."):
                if relative.strip("./"):  # `../../homes/x`, not a bare `../..`
                    add(relative, "<home>")
                    relatives.add(relative)
            elif relative != ".":  # HOME inside the working directory: its dot-folders (`home/.qwen`), not a word
                add(relative + "/.", "<home>/.")
                relatives.add(relative + "/.")
    for value, token in list(forms.items()):
        mangled = re.sub(r"[^A-Za-z0-9]", "-", value)
        if value.startswith("/") and len(mangled) >= _MANGLED_MIN:
            add(mangled, token)
    if not forms:
        return _Forms(None, forms)
    alternatives = "|".join(
        # an absolute path may follow a slash (`file:///…`), a relative one starts at a path's start
        _RELATIVE_BEFORE + re.escape(value) if value in relatives else re.escape(value)
        for value in sorted(forms, key=len, reverse=True)
    )
    # LeftmostFirst: the kind with the SIMD prefilter (secrets.py)
    anywhere = ahocorasick_rs.BytesAhoCorasick(
        [b"\\/", *(form.encode() for form in forms)], ahocorasick_rs.MatchKind.LeftmostFirst
    )
    return _Forms(re.compile(f"{_BEFORE}(?:{alternatives}){_AFTER}"), forms, anywhere)


def mentions(body: bytes, places: Places) -> bool:
    """Whether a request body holds one of the places: only then does its exchange keep them, so a cassette
    says where it was recorded only where the requests already do."""
    forms = _forms(places.cwd, places.home)
    if forms.pattern is None:
        return False
    # the pattern matches only where a form is: one pass for all the forms' bytes costs far less than the
    # pattern's attempt at every position (milliseconds over an agent's 200 KB history, on every request
    # recorded), and than a search for each form (`in` slows down where the body has many backslashes)
    assert forms.anywhere is not None
    if not forms.anywhere.find_matches_as_indexes(body):
        return False
    return forms.pattern.search(body.decode("utf-8", "replace").replace("\\/", "/")) is not None


@dataclass(frozen=True, slots=True)
class Neutralised:
    body: Any  # the output budgets left out: they are compared apart, with `slack`
    budgets: tuple[tuple[str, int], ...]  # (JSON path, value)
    slack: int  # how many characters of places were neutralised: how far a count derived from them may move


@dataclass(frozen=True, slots=True)
class Neutral:
    """The default preset for the requests of one run: those made in `places` (None: unknown, so only the
    date-times and ids are neutralised)."""

    places: Places | None

    def apply(self, body: Any) -> Neutralised:
        """`body` (parsed JSON) with what depends on where and when it was made neutralised."""
        cwd, home = (self.places.cwd, self.places.home) if self.places is not None else (None, None)
        slack = 0

        def text(value: str) -> str:
            nonlocal slack
            value, replaced = _neutral_text(value, cwd, home)
            slack += replaced
            return value

        budgets: list[tuple[str, int]] = []
        body = _walk(_without_budgets(body, "$", budgets), text, ids=False)
        return Neutralised(body, tuple(budgets), slack)


@functools.lru_cache(maxsize=4096)  # an agent sends its system prompt and history again with every request
def _neutral_text(value: str, cwd: str | None, home: str | None) -> tuple[str, int]:
    """A string with the places (of `cwd`, `home`) and the dates and times neutralised, and how many characters
    of places it held."""
    forms = _forms(cwd, home) if cwd is not None else _Forms(None, {})
    replaced = 0

    def place(match: re.Match[str]) -> str:
        nonlocal replaced
        replaced += len(match.group())
        return forms.tokens[match.group()]

    # each pattern only where what it needs is: a regular expression costs a pass over the string
    if forms.pattern is not None and ("/" in value or "-" in value):  # in every form of a place
        value = forms.pattern.sub(place, value)
        if replaced:
            value = _placed_ids(value)
    if "-" in value:
        value = _DATETIME.sub("<datetime>", value)
    if " 1" in value or " 2" in value:  # a written-out date's year (19xx, 20xx) follows a space
        for pattern, replacement in _DATES:
            value = pattern.sub(replacement, value)
    return (_TIME.sub("<time>", value) if ":" in value else value), replaced


def _placed_ids(value: str) -> str:
    """`value` with the UUIDs named as folders or files under its neutralised places shown as `<uuid>`."""
    while True:
        value, count = _PLACED_UUID.subn(r"\1<uuid>", value)
        if not count:
            return value


def budgets_fit(recorded: Neutralised, received: Neutralised) -> bool:
    """Whether two requests' output budgets agree: the same fields, each apart by no more than the characters
    of places either neutralised (a client that sizes the answer to what is left of the context window
    derives it from the prompt's length, which the places change; a token is never shorter than a
    character)."""
    slack = max(recorded.slack, received.slack)
    ours, theirs = dict(recorded.budgets), dict(received.budgets)
    return ours.keys() == theirs.keys() and all(abs(value - theirs[path]) <= slack for path, value in ours.items())


def _ids(value: str) -> str:
    return _HEX_ID.sub("<id>", _UUID.sub("<uuid>", value))


def _walk(value: Any, text: Callable[[str], str], ids: bool) -> Any:
    """`ids`: inside a field that names ids, or a `metadata` object."""
    if isinstance(value, str):
        return _ids(text(value)) if ids else text(value)
    if isinstance(value, list):
        return [_walk(item, text, ids) for item in value]
    if isinstance(value, dict):
        return {key: _walk(item, text, ids or _names_ids(key)) for key, item in value.items()}
    return value


@functools.lru_cache(maxsize=1024)  # the same few keys, request after request
def _names_ids(key: str) -> bool:
    return key == "metadata" or key.replace("_", "").replace("-", "").lower() in _ID_FIELDS


def _without_budgets(value: Any, path: str, found: list[tuple[str, int]], depth: int = 0) -> Any:
    """`value` with its budgets (`$.max_tokens`, `$.generationConfig.maxOutputTokens`…: in objects, not lists,
    near the top) shown as `<budget>`, each put in `found`."""
    if not isinstance(value, dict) or depth > _BUDGET_DEPTH:
        return value
    kept: dict[str, Any] = {}
    for key, item in value.items():
        where = f"{path}.{key}"
        if key in _BUDGETS and type(item) is int:
            found.append((where, item))
            kept[key] = "<budget>"
        else:
            kept[key] = _without_budgets(item, where, found, depth + 1)
    return kept
