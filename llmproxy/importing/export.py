"""A cassette written back as a HAR 1.2 file or a vcrpy cassette, so that a user can leave llmproxy as easily as
they came: every exchange as it was recorded (secrets stay redacted), a stream as one body holding its events,
as those tools keep one. Written exchange by exchange to a file beside the output, put in place at the end.

Bodies are stored decoded: HAR keeps them so (its headers still name the wire's encoding, as devtools write
them); a vcrpy cassette holds bodies as on the wire, so its ``Content-Encoding`` and ``Content-Length`` headers
are dropped, as vcrpy's own ``decode_compressed_response`` drops them. WebSocket exchanges have no form in
either format and are left out, counted; a request the upstream never answered is a HAR entry with status 0
and is left out of a vcrpy cassette.
"""

import base64
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qsl, urlsplit

import orjson
import yaml

from llmproxy import __version__
from llmproxy.cassette.bodies import body_bytes, event_bytes
from llmproxy.cassette.model import Exchange, Request, Response, header_pairs
from llmproxy.cassette.store import load_cassette
from llmproxy.errors import CassetteError
from llmproxy.importing.wire import header

_Dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_ON_THE_WIRE_ONLY = frozenset({"content-encoding", "content-length", "transfer-encoding"})


@dataclass(frozen=True, slots=True)
class Exported:
    written: int
    left_out: int  # WebSocket exchanges, and unanswered requests in a vcrpy cassette

    def __str__(self) -> str:
        written = f"{self.written} exchange{'s' if self.written != 1 else ''}"
        return written + (f" ({self.left_out} left out: no form in the format)" if self.left_out else "")


def export_cassette(path: Path, form: str, output: Path) -> Exported:
    """Raises CassetteError when the cassette cannot be read or the output written."""
    exchanges = load_cassette(path).exchanges
    temp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    written = left_out = 0
    try:
        with temp.open("w", encoding="utf-8") as file:
            write = _har if form == "har" else _vcrpy
            for kept in write(file, exchanges):
                written += kept
                left_out += not kept
        temp.replace(output)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise CassetteError(f"cannot write {output}: {exc.strerror or exc}") from None
    return Exported(written, left_out)


def _har(file: IO[str], exchanges: list[Exchange]) -> Iterator[bool]:
    creator = {"name": "llmproxy", "version": __version__}
    file.write('{"log": {"version": "1.2", "creator": ' + orjson.dumps(creator).decode() + ', "entries": [\n')
    first = True
    for exchange in exchanges:
        if exchange.websocket is not None:
            yield False
            continue
        file.write(("" if first else ",\n") + orjson.dumps(_har_entry(exchange)).decode())
        first = False
        yield True
    file.write("\n]}}\n")


def _har_entry(exchange: Exchange) -> dict[str, Any]:
    timings = exchange.timings
    total = timings.total_ms or 0.0
    ttfb = timings.ttfb_ms if timings.ttfb_ms is not None else total
    entry: dict[str, Any] = {
        "startedDateTime": timings.started_at.isoformat().replace("+00:00", "Z"),
        "time": total,
        "request": _har_request(exchange.request),
        "response": _har_response(exchange.response, exchange.error),
        "cache": {},
        "timings": {"send": 0, "wait": ttfb, "receive": max(0.0, total - ttfb)},
    }
    return entry


def _har_request(request: Request) -> dict[str, Any]:
    headers = header_pairs(request.headers)
    har: dict[str, Any] = {
        "method": request.method,
        "url": request.url,
        "httpVersion": request.http_version,
        "cookies": [],
        "headers": [{"name": name, "value": value} for name, value in headers],
        "queryString": [{"name": n, "value": v} for n, v in parse_qsl(urlsplit(request.url).query)],
        "headersSize": -1,
        "bodySize": -1,
    }
    if request.body is not None:
        data = body_bytes(request.body)
        har["postData"] = {"mimeType": header(headers, "content-type") or "", **_content(data)}
        har["bodySize"] = len(data)
    return har


def _har_response(response: Response | None, error: str | None) -> dict[str, Any]:
    if response is None:
        return {
            "status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
            "content": {"size": 0, "mimeType": ""}, "redirectURL": "", "headersSize": -1, "bodySize": -1,
            "_error": error or "no answer",
        }  # fmt: skip
    headers = header_pairs(response.headers)
    data = _answer(response)
    return {
        "status": response.status,
        "statusText": response.reason,
        "httpVersion": response.http_version,
        "cookies": [],
        "headers": [{"name": name, "value": value} for name, value in headers],
        "content": {"size": len(data), "mimeType": header(headers, "content-type") or "", **_content(data)},
        "redirectURL": header(headers, "location") or "",
        "headersSize": -1,
        "bodySize": -1,
    }


def _content(data: bytes) -> dict[str, str]:
    try:
        return {"text": data.decode()}
    except UnicodeDecodeError:
        return {"text": base64.b64encode(data).decode("ascii"), "encoding": "base64"}


def _vcrpy(file: IO[str], exchanges: list[Exchange]) -> Iterator[bool]:
    file.write("interactions:\n")
    for exchange in exchanges:
        if exchange.websocket is not None or exchange.response is None:
            yield False
            continue
        file.write(yaml.dump([_interaction(exchange, exchange.response)], Dumper=_Dumper, allow_unicode=True))
        yield True
    file.write("version: 1\n")


def _interaction(exchange: Exchange, response: Response) -> dict[str, Any]:
    request = exchange.request
    return {
        "request": {
            "body": _vcrpy_body(body_bytes(request.body)) if request.body is not None else None,
            "headers": _vcrpy_headers(request.headers),
            "method": request.method,
            "uri": request.url,
        },
        "response": {
            "body": {"string": _vcrpy_body(_answer(response))},
            "headers": _vcrpy_headers(response.headers),
            "status": {"code": response.status, "message": response.reason},
        },
    }


def _vcrpy_headers(lines: list[str]) -> dict[str, list[str]]:
    headers: dict[str, list[str]] = {}
    for name, value in header_pairs(lines):
        if name.lower() not in _ON_THE_WIRE_ONLY:
            headers.setdefault(name, []).append(value)
    return headers


def _vcrpy_body(data: bytes) -> str | bytes:
    """Text as a string, anything else as bytes (``!!binary``), as vcrpy writes them."""
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


def _answer(response: Response) -> bytes:
    if response.events is not None:
        return b"".join(event_bytes(event) for event in response.events)
    return body_bytes(response.body) if response.body is not None else b""
