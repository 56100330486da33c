"""HAR 1.2 files (browser devtools, Playwright, MockServer's export, mitmproxy's ``savehar``) read as entries,
streamed entry by entry (`ijson`), so a HAR of any size is read in bounded memory.

HAR keeps bodies decoded (``content.text``, base64 when ``content.encoding`` says so) while the headers still
name the content encoding they had on the wire; a streamed answer is one body holding the whole event stream.
Its timings give the time to the first byte (everything up to ``wait``) and the total (``time``); an entry the
browser never got an answer for (status 0) is a request the upstream never answered.
"""

import base64
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ijson  # type: ignore[import-untyped]

from llmproxy.importing import wire
from llmproxy.importing.entries import Entry, UnreadableError
from llmproxy.model.exchange import RawExchange

_BEFORE_FIRST_BYTE = ("blocked", "dns", "connect", "send", "wait")  # `ssl` is part of `connect`


def read_har(path: Path) -> Iterator[Entry]:
    """The entries of a HAR file. Raises UnreadableError for a file that is not one, or is cut short."""
    index = -1
    try:
        with path.open("rb") as file:
            for index, entry in enumerate(ijson.items(file, "log.entries.item", use_float=True)):
                where = f"{path}: entry {index}"
                try:
                    yield Entry(where, _exchange(entry))
                except (ValueError, TypeError, KeyError, AttributeError) as exc:
                    yield Entry.broken(
                        where, f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
                    )
    except ijson.JSONError as exc:
        after = f" after entry {index}" if index >= 0 else ""
        raise UnreadableError(f"{path}: not a complete HAR file{after}: {json_error(exc)}") from None
    if index < 0 and not _has_log(path):
        raise UnreadableError(f"{path}: not a HAR file (no log.entries)")


def json_error(exc: Exception) -> str:
    """ijson's C backend points at the place in lines of their own: the first line says what."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _has_log(path: Path) -> bool:
    with path.open("rb") as file:
        return any(prefix == "log.entries" for prefix, _, _ in ijson.parse(file))


def _exchange(entry: dict[str, Any]) -> RawExchange:
    request, response = entry["request"], entry["response"]
    started_at = datetime.fromisoformat(str(entry["startedDateTime"]).replace("Z", "+00:00"))
    if started_at.tzinfo is None:
        started_at = started_at.replace(tzinfo=UTC)
    post = request.get("postData") or {}
    raw_request = wire.raw_request(
        str(request["method"]),
        str(request["url"]),
        _version(request.get("httpVersion")),
        _headers(request["headers"]),
        _text(post.get("text"), post.get("encoding")),
        encoded=False,
    )
    timings = entry.get("timings") or {}
    spent = [float(timings[name]) for name in _BEFORE_FIRST_BYTE if isinstance(timings.get(name), int | float)]
    ttfb = sum(value for value in spent if value >= 0) if spent else None
    total = float(entry["time"]) if isinstance(entry.get("time"), int | float) and entry["time"] >= 0 else None
    status = int(response["status"])
    if status == 0:  # the browser got no answer (blocked, failed, cancelled)
        error = str(response.get("_error") or entry.get("_error") or "no answer")
        return wire.raw_exchange(raw_request, None, started_at, None, total, error)
    content = response.get("content") or {}
    answer = wire.raw_response(
        status,
        str(response.get("statusText") or ""),
        _version(response.get("httpVersion")),
        _headers(response["headers"]),
        _text(content.get("text"), content.get("encoding")),
        encoded=False,
        first_event_ms=ttfb or 0.0,
        last_event_ms=total,
    )
    return wire.raw_exchange(raw_request, answer, started_at, ttfb, total)


def _version(value: Any) -> str:
    """Chromium writes ``h2``, ``h3`` or ``http/1.1``; mitmproxy and others ``HTTP/1.1``, ``HTTP/2.0``."""
    text = str(value or "").strip()
    lowered = text.lower()
    if lowered in ("h2", "http/2", "http/2.0"):
        return "HTTP/2.0"
    if lowered in ("h3", "http/3", "http/3.0"):
        return "HTTP/3"
    if lowered.startswith("http/"):
        return "HTTP/" + text[5:]
    return "HTTP/1.1"


def _headers(headers: Any) -> list[tuple[str, str]]:
    """HAR's ``[{name, value}]``; HTTP/2 pseudo-headers (``:authority``…) are not headers of the request."""
    if not isinstance(headers, list):
        raise ValueError("headers must be a list")
    return [(str(h["name"]), str(h["value"])) for h in headers if not str(h["name"]).startswith(":")]


def _text(text: Any, encoding: Any) -> bytes:
    if text is None:
        return b""
    if encoding == "base64":
        return base64.b64decode(str(text))
    return str(text).encode("utf-8", "surrogateescape")
