"""`llmproxy verify drift --live`: re-send a cassette's requests to the live provider and report structural
changes in the responses — fields added, removed, or of another type; never wording.

Fail-closed: an exchange that cannot be re-sent (no credentials for its redacted key, a network error, a
non-2xx answer, a body that is not JSON or a JSON stream) is *could not check*, never "no drift". The
transport is injected, so the comparison is tested without a network.
"""

import os
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.model import Exchange, header_pairs
from llmproxy.cassette.secrets import PLACEHOLDER
from llmproxy.errors import ParseError
from llmproxy.framing.sse import decode_all
from llmproxy.words import plural

if TYPE_CHECKING:
    from llmproxy.analysis.gates import Verdict

type Shape = dict[str, str]  # JSON path → type name
type Send = Callable[[str, str, list[tuple[str, str]], bytes], tuple[int, bytes]]
"""(method, url, headers, body) → (status, body); raises OSError when nothing came back."""

_KEYS = {  # where the key a recording redacted comes from, by host
    "api.anthropic.com": ("ANTHROPIC_API_KEY",),
    "api.openai.com": ("OPENAI_API_KEY",),
    "generativelanguage.googleapis.com": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}
_HOP = {"content-length", "host", "connection", "transfer-encoding", "accept-encoding"}


@dataclass(frozen=True, slots=True)
class Drift:
    exchange: int
    status: str  # "same", "drift", "could_not_check"
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    type_changed: tuple[str, ...] = ()
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "exchange": self.exchange,
            "status": self.status,
            "addedPaths": list(self.added),
            "removedPaths": list(self.removed),
            "typeChangedPaths": list(self.type_changed),
            **({"note": self.note} if self.note else {}),
        }


def shape(value: Any, path: str = "$", into: Shape | None = None) -> Shape:
    """Every path in a JSON document with its type; an array is represented by its first element."""
    into = {} if into is None else into
    if isinstance(value, dict):
        into[path] = "object"
        for key, item in value.items():
            shape(item, f"{path}.{key}", into)
    elif isinstance(value, list):
        into[path] = "array"
        if value:
            shape(value[0], f"{path}[]", into)
    else:
        into[path] = {bool: "boolean", int: "number", float: "number", str: "string"}.get(type(value), "null")
    return into


def body_shape(data: bytes) -> Shape:
    """The shape of a JSON body, or of a stream: each event's JSON under its type (`$<message_start>…`).
    Raises ValueError for anything else."""
    try:
        return shape(orjson.loads(data))
    except orjson.JSONDecodeError:
        pass
    try:
        events = decode_all([data])
    except ParseError as exc:
        raise ValueError(str(exc)) from None
    merged: Shape = {}
    for event in events:
        if event.data.strip() == "[DONE]":
            continue
        parsed = orjson.loads(event.data)  # JSONDecodeError is a ValueError
        kind = parsed.get("type") if isinstance(parsed, dict) else None
        shape(parsed, f"$<{kind or event.event or 'data'}>", merged)
    if not merged:
        raise ValueError("neither JSON nor a stream of JSON events")
    return merged


def compare(recorded: Shape, live: Shape) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    added = tuple(sorted(live.keys() - recorded.keys()))
    removed = tuple(sorted(recorded.keys() - live.keys()))
    changed = tuple(sorted(path for path in recorded.keys() & live.keys() if recorded[path] != live[path]))
    return added, removed, changed


def check(exchanges: Iterable[Exchange], send: Send, environ: dict[str, str] | None = None) -> list[Drift]:
    """Each recorded chat exchange with a 2xx JSON answer, re-sent and compared (the cassette must be loaded
    with `load_cassette`, so every request body is whole)."""
    environ = dict(os.environ) if environ is None else environ
    return [_check(exchange, send, environ) for exchange in exchanges if exchange.provider and exchange.operation]


def _check(exchange: Exchange, send: Send, environ: dict[str, str]) -> Drift:
    def unchecked(note: str) -> Drift:
        return Drift(exchange.id, "could_not_check", note=note)

    response = exchange.response
    if response is None or not 200 <= response.status < 300:
        return unchecked("the recording has no successful answer to compare with")
    recorded_bytes = b"".join(map(event_bytes, response.events)) if response.events else _body(response.body)
    try:
        recorded = body_shape(recorded_bytes)
    except ValueError as exc:
        return unchecked(f"the recorded answer is not JSON: {exc}")
    request = exchange.request
    url, headers, missing = _credentials(request.url, header_pairs(request.headers), environ)
    if missing:
        return unchecked(missing)
    try:
        status, data = send(request.method, url, headers, _body(request.body))
    except OSError as exc:
        return unchecked(f"could not reach {urlsplit(url).hostname}: {exc}")
    if not 200 <= status < 300:
        return unchecked(f"the live answer was status {status}")
    try:
        live = body_shape(data)
    except ValueError as exc:
        return unchecked(f"the live answer is not JSON: {exc}")
    added, removed, changed = compare(recorded, live)
    return Drift(exchange.id, "drift" if added or removed or changed else "same", added, removed, changed)


def _credentials(
    url: str, headers: list[tuple[str, str]], environ: dict[str, str]
) -> tuple[str, list[tuple[str, str]], str | None]:
    """The request with each redacted key replaced by the key from the environment, or why it cannot be."""
    host = urlsplit(url).hostname or ""
    names = _KEYS.get(host, ())
    key = next((environ[name] for name in names if environ.get(name)), None)
    kept = [(name, value) for name, value in headers if name.lower() not in _HOP]
    if key is not None:
        kept = [(name, PLACEHOLDER.sub(key, value)) for name, value in kept]
        url = PLACEHOLDER.sub(key, url)
    if any(PLACEHOLDER.search(value) for _, value in kept) or PLACEHOLDER.search(url):
        wanted = " or ".join(names) or "a key for this host"
        return url, kept, f"the recorded credentials for {host} are redacted: set {wanted}"
    return url, kept, None


def _body(body: Any) -> bytes:
    return body_bytes(body) if body is not None else b""


def verdict(results: Sequence[Drift]) -> "Verdict":
    """The drift gate's verdict: a drifted answer fails; one it could not check, or none at all, is could not
    check — never a pass."""
    from llmproxy.analysis.gates import GateOutcome, Verdict

    def paths(result: Drift) -> str:
        said = (("added", result.added), ("removed", result.removed), ("retyped", result.type_changed))
        return "; ".join(f"{what} {', '.join(found)}" for what, found in said if found)

    reasons = [f"exchange {result.exchange}: {paths(result)}" for result in results if result.status == "drift"]
    unchecked = [
        f"exchange {result.exchange}: could not check: {result.note}"
        for result in results
        if result.status == "could_not_check"
    ]
    checked = sum(result.status != "could_not_check" for result in results)
    drifted = sum(result.status == "drift" for result in results)
    details = {
        "exchanges": len(results),
        "drifted": drifted,
        "checked": checked,
        "couldNotCheck": len(unchecked),
        "details": [result.as_json() for result in results],
    }
    if reasons:
        outcome = GateOutcome.FAIL
    elif unchecked or not results:
        outcome = GateOutcome.COULD_NOT_CHECK
    else:
        outcome = GateOutcome.PASS
    summary = f"{drifted} of {plural(checked, 'exchange')} re-sent drifted" + (
        f", {len(unchecked)} could not be checked" if unchecked else ""
    )
    said = reasons + unchecked or (["no chat exchange to check"] if not results else [])
    return Verdict("drift", outcome, said, details, summary=summary)


def sender(timeout: float) -> Send:
    """A transport over the standard library (through the proxy the environment names, as any client's):
    (method, url, headers, body) → (status, body)."""

    def send(method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> tuple[int, bytes]:
        request = urllib.request.Request(url, data=body or None, method=method, headers=dict(headers))
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.read()
        except urllib.error.URLError as exc:
            raise OSError(str(exc.reason)) from None

    return send
