"""Provider detection: ``(host, path, headers, method, port) → Route``, from the rule table (`rules.py`), the
compatible vendors' hosts (`compatible.py`) and the routes the user declared (`declared.py`). A WebSocket
upgrade (a GET with ``Upgrade: websocket``) matches only rules marked `websocket`: the APIs llmproxy can read
message by message.
"""

import functools
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

from llmproxy.model import Operation, Provider, Route
from llmproxy.providers import declared
from llmproxy.providers.compatible import LOOPBACK_HOSTS, vendor_of
from llmproxy.providers.rules import RULES, RouteRule, Streaming

__all__ = [
    "RULES",
    "RouteRule",
    "Streaming",
    "detect",
    "forget",
    "is_provider_host",
    "is_websocket_upgrade",
    "with_body",
]


def detect(
    host: str,
    path: str,
    headers: Mapping[str, str] | None = None,
    *,
    method: str = "POST",
    scheme: str = "https",
    port: int | None = None,
) -> Route | None:
    """The API a request speaks, or None for traffic that is not a known LLM API.

    `path` may carry a query string; colons may be percent-encoded (``%3A``). Among rules whose path
    matches, one that serves `host` wins, then one that is `distinct` or whose tell-tale headers are present,
    then the first in `RULES`. `scheme` does not change the answer today (local servers speak plain http); it
    is part of the signature so rules can use it. A rule whose path names the model (a `model` group) sets
    `Route.model`, URL-decoded. `port` tells loopback servers apart (LM Studio, vLLM) for `Route.vendor`.
    A route the user declared for the host (`declared.py`) comes first. A WebSocket upgrade gets a
    `websocket` route, which always streams.
    """
    del scheme
    host = host.lower().rstrip(".").strip("[]")
    bare, _, query = path.partition("?")
    bare_path = _ENCODED_COLON.sub(":", bare).rstrip("/") or "/"
    present = frozenset(name.lower() for name in headers or () if name.lower() in _TELLTALE_HEADERS)
    route = _detect(host, port, bare_path, method.upper(), present, is_websocket_upgrade(method, headers))
    if route is not None and route.streaming is None and route.operation is Operation.RESPONSE_RETRIEVE:
        return _settled(route, _STREAM_QUERY.search(query) is not None)
    return route


def is_websocket_upgrade(method: str, headers: Mapping[str, str] | None) -> bool:
    """Whether a request asks to become a WebSocket (RFC 6455: a GET with ``Upgrade: websocket``)."""
    if method.upper() != "GET" or not headers:
        return False
    return any(name.lower() == "upgrade" and value.strip().lower() == "websocket" for name, value in headers.items())


@functools.lru_cache(maxsize=4096)
def _detect(
    host: str, port: int | None, bare_path: str, method: str, header_names: frozenset[str], websocket: bool
) -> Route | None:
    """Detection proper, cached: clients send the same few host, path and header combinations again and
    again, and walking the rules is the costliest step of handling a mocked or replayed request."""
    declaration = next((d for d in declared.current() if d.covers(host, port, bare_path)), None)
    if declaration is not None and declaration.api is not None and not websocket:
        route = _declared_route(declaration.api, declaration.vendor, bare_path, method)
        if route is not None:
            return route
    vendor_host = declaration is not None  # a vendor's host: its paths count with or without /v1
    best: tuple[int, RouteRule, re.Match[str]] | None = None
    for rule in RULES:
        allowed = rule.websocket if websocket else method in rule.methods
        match = rule.path.search(bare_path) if allowed else None
        if match is None:
            continue
        on_host = rule.serves(host, bare_path) or (vendor_host and rule.compatible)
        if rule.host_only and not on_host and not header_names.intersection(rule.headers):
            continue
        score = 2 if on_host else 1 if rule.distinct or header_names.intersection(rule.headers) else 0
        if best is None or score > best[0]:
            best = (score, rule, match)
    if best is None:
        return None
    _, rule, match = best
    vendor = declaration.vendor if declaration is not None else vendor_of(host, port)
    return _route(rule, match, vendor, websocket)


def _route(rule: RouteRule, match: re.Match[str] | None, vendor: str | None, websocket: bool = False) -> Route:
    streaming = True if websocket else {Streaming.NEVER: False, Streaming.ALWAYS: True}.get(rule.streaming)
    groups = match.groupdict() if match is not None else {}  # streaming None: decided later (`with_body`)
    model = unquote(groups["model"]) if groups.get("model") else None
    vendor = None if vendor == rule.provider.value else vendor
    return Route(rule.provider, rule.operation, streaming, model, groups.get("version"), websocket, vendor)


def _declared_route(api: tuple[Provider, Operation], vendor: str | None, bare_path: str, method: str) -> Route | None:
    """A declared codec's route: its own rule where the path is one of its paths (so a model in the URL is
    read), else its first rule whatever the path; None for a method the API does not use (a gateway's
    `GET /models` is still recognised by the table)."""
    rules = [rule for rule in RULES if (rule.provider, rule.operation) == api and method in rule.methods]
    for rule in rules:
        match = rule.path.search(bare_path)
        if match is not None:
            return _route(rule, match, vendor)
    return _route(rules[0], None, vendor) if rules else None


def forget() -> None:
    """Drop what detection remembered (the declared routes changed)."""
    _detect.cache_clear()


declared.when_changed(forget)


_ENCODED_COLON = re.compile("%3a", re.IGNORECASE)
_STREAM_QUERY = re.compile(r"(^|&)stream=(true|1)(&|$)", re.IGNORECASE)


def with_body(route: Route, body: Mapping[str, Any] | None) -> Route:
    """Settle `streaming` from the parsed request body, for routes whose body decides: its boolean
    `stream`, else the API's default (off, except for Ollama's native API)."""
    if route.streaming is not None:
        return route
    flag = body.get("stream") if body is not None else None
    return _settled(route, flag if isinstance(flag, bool) else None)


@functools.lru_cache(maxsize=1024)
def _settled(route: Route, flag: bool | None) -> Route:
    """The route with `streaming` decided (few distinct routes: building one per request cost more than
    deciding)."""
    default = (route.provider, route.operation) in _STREAMING_BY_DEFAULT
    return replace(route, streaming=flag if flag is not None else default)


def is_provider_host(host: str) -> bool:
    """Whether `host` is one of the known LLM API hosts, whatever the path. Loopback is not: a local Ollama
    lists it to win ties, but everything else a developer runs locally lives there too."""
    host = host.lower().rstrip(".").strip("[]")
    if host in LOOPBACK_HOSTS:
        return False
    return any(declaration.host == host for declaration in declared.current()) or any(
        rule.serves(host) for rule in RULES
    )


_STREAMING_BY_DEFAULT = frozenset(
    (rule.provider, rule.operation) for rule in RULES if rule.streaming is Streaming.BODY_FLAG_DEFAULT_TRUE
)
"""APIs that stream unless the body says `"stream": false` (Ollama's native API)."""

_TELLTALE_HEADERS = frozenset(name for rule in RULES for name in rule.headers)
"""The only headers detection looks at."""
