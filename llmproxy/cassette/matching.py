"""What replay matches a request on, and how two requests differ.

A request is seen through a `RequestView`: method, host (with a non-default port), path, query (minus
volatile parameters) and body. A JSON body is compared parsed, so key order and whitespace never matter;
volatile fields are dropped first: the built-in ones of its API, the client preset's, and the user's
`--ignore` paths; what depends on where and when the client ran is neutralised (`neutral.py`). A JSON-RPC
request (an MCP server's or A2A agent's) matches on its method and params, not its id nor `params._meta`. Both sides are
redacted the same way before they get here, so a key matches its placeholder. Views with equal keys match;
`differences` explains a miss path by path.
"""

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from llmproxy.cassette import jsonpath
from llmproxy.cassette.bodies import body_bytes
from llmproxy.cassette.model import JsonBody, Request
from llmproxy.cassette.neutral import ONE_PLACE, Neutral, Neutralised, budgets_fit
from llmproxy.cassette.presets import Preset
from llmproxy.http import default_port
from llmproxy.providers.registry import facts

VOLATILE_QUERY = frozenset({"_", "timestamp", "t", "request_id"})
_EXCERPT = 60


@functools.cache
def volatile_fields(provider: str | None) -> tuple[jsonpath.Path, ...]:
    """The fields of a provider's requests that differ between two runs of the same program, as it declares
    them (`llmproxy.providers.facts`)."""
    return tuple(jsonpath.parse(path) for path in facts(provider).volatile)


@dataclass(frozen=True, slots=True)
class RequestView:
    method: str
    host: str
    path: str
    query: tuple[tuple[str, str], ...]
    body: Any  # normalised JSON, or the body's text, or None
    key: bytes
    neutralised: Neutralised | None = None  # the default preset's: the budgets it left out of `body`, its slack

    @classmethod
    def of(
        cls,
        request: Request,
        provider: str | None,
        preset: Preset | None,
        ignore: tuple[jsonpath.Path, ...] = (),
        neutral: Neutral | None = None,
    ) -> "RequestView":
        """`provider` picks the built-in volatile fields; `preset` the client's; `ignore` the user's; `neutral`
        what depends on where and when the request was made (None: nothing)."""
        url = urlsplit(request.url)
        default = default_port(url.scheme)
        host = (url.hostname or "").lower() + (f":{url.port}" if url.port and url.port != default else "")
        query = tuple(
            sorted((k, v) for k, v in parse_qsl(url.query, keep_blank_values=True) if k not in VOLATILE_QUERY)
        )
        body: Any = None
        neutralised = None
        if isinstance(request.body, JsonBody):
            body = normalise(request.body.json_, provider, preset, ignore)
            if neutral is not None:
                neutralised = neutral.apply(body)
                body = neutralised.body
        elif request.body is not None:
            body = body_bytes(request.body).decode("utf-8", "replace")
        method = request.method.upper()
        key = orjson.dumps([method, host, url.path, query, body], option=orjson.OPT_SORT_KEYS)
        if neutralised is not None and neutralised.slack:
            key = key.replace(*ONE_PLACE)
        return cls(method, host, url.path or "/", query, body, key, neutralised)

    def fits(self, received: "RequestView") -> bool:
        """Whether a request with this view's key answers `received` (same key): whether their output budgets
        agree (`neutral.budgets_fit`)."""
        ours, theirs = self.neutralised, received.neutralised
        return ours is None or theirs is None or budgets_fit(ours, theirs)


def normalise(body: Any, provider: str | None, preset: Preset | None, ignore: Iterable[jsonpath.Path]) -> Any:
    if isinstance(body, list):  # a JSON-RPC batch: its requests matched as one is, in order
        body = [_without_id(item) for item in body]
    body = _without_id(body)
    for path in (*volatile_fields(provider), *ignore):
        body = jsonpath.drop(body, path)
    return preset.apply(body) if preset is not None else body


def _without_id(message: Any) -> Any:
    """A JSON-RPC request without its id, a client numbering its requests as it goes, nor its `params._meta`:
    what the client says of itself (Codex CLI: its turn's start time, its window, its session) and the
    progress token it picks (the Gemini CLI: a fresh UUID per call), which differ every run while the call is
    the same."""
    if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and "method" in message):
        return message
    request = {key: value for key, value in message.items() if key != "id"}
    params = request.get("params")
    if isinstance(params, dict) and "_meta" in params:
        request["params"] = {key: value for key, value in params.items() if key != "_meta"}
    return request


@dataclass(frozen=True, slots=True)
class Difference:
    path: str  # a JSON path into the body, or "method", "host", "path", "query"
    recorded: str  # short excerpts
    received: str
    items: int = 1  # how many list items one side has beyond the other's (only the first is shown)


def differences(recorded: RequestView, received: RequestView, limit: int = 5) -> list[Difference]:
    """Where `received` differs from `recorded`, first differences first (at most `limit`)."""
    found: list[Difference] = []
    for name in ("method", "host", "path", "query"):
        ours, theirs = getattr(recorded, name), getattr(received, name)
        if ours != theirs:
            found.append(Difference(name, _excerpt(ours), _excerpt(theirs)))
    _diff(recorded.body, received.body, (), found, limit)
    if not recorded.fits(received):
        found.extend(_budget_differences(recorded, received))
    return found[:limit]


def _budget_differences(recorded: RequestView, received: RequestView) -> list[Difference]:
    """The output budgets further apart than the places neutralised allow."""
    ours = dict(recorded.neutralised.budgets if recorded.neutralised else ())
    theirs = dict(received.neutralised.budgets if received.neutralised else ())
    return [
        Difference(path, str(ours.get(path, "(missing)")), str(theirs.get(path, "(missing)")))
        for path in [*ours, *(path for path in theirs if path not in ours)]
        if ours.get(path) != theirs.get(path)
    ]


def _diff(a: Any, b: Any, path: jsonpath.Path, found: list[Difference], limit: int) -> None:
    if len(found) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in b:
                found.append(Difference(jsonpath.render((*path, key)), _excerpt(a[key]), "(missing)"))
            elif key not in a:
                found.append(Difference(jsonpath.render((*path, key)), "(missing)", _excerpt(b[key])))
            else:
                _diff(a[key], b[key], (*path, key), found, limit)
            if len(found) >= limit:
                return
        return
    if isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            _diff(x, y, (*path, index), found, limit)
            if len(found) >= limit:
                return
        if len(a) != len(b):
            longer, which = (a, "recorded") if len(a) > len(b) else (b, "received")
            extra = _excerpt(longer[min(len(a), len(b))])
            where = jsonpath.render((*path, min(len(a), len(b))))
            recorded, received = (extra, "(missing)") if which == "recorded" else ("(missing)", extra)
            found.append(Difference(where, recorded, received, items=abs(len(a) - len(b))))
        return
    if isinstance(a, str) and isinstance(b, str):
        found.append(Difference(jsonpath.render(path), *_around_first_change(a, b)))
        return
    found.append(Difference(jsonpath.render(path), _excerpt(a), _excerpt(b)))


def _around_first_change(a: str, b: str) -> tuple[str, str]:
    """Excerpts of two strings around where they first differ."""
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    begin = max(0, start - _EXCERPT // 3)

    def cut(text: str) -> str:
        piece = text[begin : begin + _EXCERPT]
        return ("…" if begin else "") + repr(piece)[1:-1] + ("…" if begin + _EXCERPT < len(text) else "")

    return cut(a), cut(b)


def _excerpt(value: Any) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"


def closest(received: RequestView, candidates: Sequence[RequestView]) -> int | None:
    """The index of the recorded request most like `received`: same method and path first, then the fewest
    differences (each list item one side lacks counting as one: a conversation's turn is nearer its own
    recorded turn, where one message changed, than an earlier turn that lacks whole messages), then the
    earliest."""
    best: tuple[tuple[int, int, int], int] | None = None
    for index, candidate in enumerate(candidates):
        score = (
            int(candidate.method != received.method or candidate.path != received.path),
            int(candidate.host != received.host),
            sum(difference.items for difference in differences(candidate, received, limit=50)),
        )
        if best is None or score < best[0]:
            best = (score, index)
    return best[1] if best is not None else None
