"""The runtime control API: change chaos per host while the proxy runs, in the shape of MockServer's
service-scoped chaos REST API (`PUT/GET/PATCH /mockserver/serviceChaos`), at `/llmproxy/chaos`:

* `PUT {"host": H, "chaos": {...}, "ttlMillis": N}` registers (or replaces) a host's profile, for N ms when
  given; `{"host": H, "remove": true}` (or no `chaos`) removes it; `{"clear": true}` removes them all;
* `PATCH {"host": H, "chaos": {...}}` merge-patches a host's profile (RFC 7396), keeping its TTL;
* `DELETE ?host=H` removes one, `DELETE` without a host clears all;
* `GET` answers `{"services": {H: profile}, "ttlRemainingMillis": {H: ms}, "injected": {kind: n}, …}`.

Only loopback clients that send the run's bearer token (`LLMPROXY_CONTROL_TOKEN`) are answered; anything
else gets 401. This is the pure part; `llmproxy.control.server` puts it on 127.0.0.1, beside the REST API.
"""

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import pydantic

from llmproxy.errors import ChaosError
from llmproxy.intercept.engine import Intercept
from llmproxy.intercept.rules import parse_profile
from llmproxy.validation_errors import describe

logger = logging.getLogger(__name__)

PATH: Final = "/llmproxy/chaos"


@dataclass(frozen=True, slots=True)
class Answer:
    """A control request's answer: its status, its JSON body and any headers it needs (`allow` on a 405), or a
    body already rendered (a report in markdown, the MCP endpoint's JSON-RPC), sent as it is as `media_type`;
    `after`: what to do once the answer is sent (a stop: the caller hears that the run stops before it does);
    `stream`: an answer sent as it comes (the event stream) instead of `body`, until it ends or the caller goes
    away (then it is closed)."""

    status: int
    body: dict[str, Any] | bytes
    headers: tuple[tuple[str, str], ...] = ()
    media_type: str = "application/json"
    after: tuple[Callable[[], None], ...] = ()
    stream: Iterator[bytes] | None = None


def handle(intercept: Intercept, method: str, target: str, body: bytes) -> Answer:
    """One control request, already authenticated: the answer, never an exception."""
    url = urlsplit(target)
    if url.path.rstrip("/") != PATH:
        return Answer(404, {"error": f"no such endpoint: {url.path} (the control API is {PATH})"})
    try:
        if method == "GET":
            return Answer(200, snapshot(intercept))
        if method == "DELETE":
            host = parse_qs(url.query).get("host", [None])[0]
            return _remove(intercept, host) if host else _clear(intercept)
        if method not in ("PUT", "PATCH"):
            return Answer(405, {"error": f"{method} is not supported: use GET, PUT, PATCH or DELETE"})
        document = json.loads(body or b"{}")
        if not isinstance(document, dict):
            raise ChaosError("the body must be a JSON object")
        return _put(intercept, document) if method == "PUT" else _patch(intercept, document)
    except (ChaosError, ValueError) as error:  # json's and pydantic's errors are ValueErrors
        return Answer(400, {"error": _one_line(error)})


def snapshot(intercept: Intercept) -> dict[str, Any]:
    registered = intercept.hosts.snapshot()
    state: dict[str, Any] = {
        "services": {
            host: profile.model_dump(exclude_defaults=True, mode="json") for host, (profile, _) in registered.items()
        }
    }
    ttl = {host: left for host, (_, left) in registered.items() if left is not None}
    if ttl:
        state["ttlRemainingMillis"] = ttl
    state["rules"] = [rule.model_dump(exclude_defaults=True, mode="json") for rule in intercept.rules]
    state["seed"] = intercept.seed
    state["injected"] = {kind.value: count for kind, count in sorted(intercept.injected.items())}
    if intercept.budget is not None:
        spend = intercept.budget.standing()
        state["budget"] = {"limitUsd": str(spend.limit), "spentUsd": str(spend.spent), "unpricedCalls": spend.unpriced}
    return state


def _put(intercept: Intercept, document: dict[str, Any]) -> Answer:
    if document.get("clear"):
        if "host" in document:
            raise ChaosError("clear and host cannot be given together")
        return _clear(intercept)
    host = _host(document)
    if document.get("remove") or document.get("chaos") is None:
        return _remove(intercept, host)
    ttl = document.get("ttlMillis")
    if ttl is not None and (not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 1):
        raise ChaosError(f"ttlMillis must be a whole number of milliseconds >= 1, got {ttl!r}")
    intercept.hosts.put(host, parse_profile(document["chaos"], "$.chaos"), ttl)
    logger.info("chaos for %s set by the control API%s", host, f" for {ttl} ms" if ttl else "")
    answer: dict[str, Any] = {"status": "registered", "host": host}
    if ttl is not None:
        answer["ttlMillis"] = ttl
    return Answer(200, answer)


def _patch(intercept: Intercept, document: dict[str, Any]) -> Answer:
    host = _host(document)
    patch = document.get("chaos")
    if not isinstance(patch, dict):
        raise ChaosError("PATCH needs host and a chaos object to merge")
    try:
        profile = intercept.hosts.patch(host, patch)
    except KeyError:
        return Answer(404, {"error": f"no chaos is registered for {host}: PUT one first"})
    except pydantic.ValidationError as error:
        problems = "; ".join("$.chaos" + problem[1:] for problem in describe(error, patch))
        raise ChaosError(f"the patched profile is not valid: {problems}") from None
    logger.info("chaos for %s patched by the control API", host)
    return Answer(
        200, {"status": "patched", "host": host, "chaos": profile.model_dump(exclude_defaults=True, mode="json")}
    )


def _remove(intercept: Intercept, host: str) -> Answer:
    removed = intercept.hosts.remove(host)
    return Answer(
        200 if removed else 404,
        {"status": "removed", "host": host} if removed else {"error": f"no chaos is registered for {host}"},
    )


def _clear(intercept: Intercept) -> Answer:
    intercept.hosts.clear()
    return Answer(200, {"status": "cleared"})


def _host(document: dict[str, Any]) -> str:
    host = document.get("host")
    if not isinstance(host, str) or not host.strip():
        raise ChaosError("host is required (a host name, or host:port)")
    return host.strip().lower()


def _one_line(error: Exception) -> str:
    """The error as one line; pydantic's as its problems, without its own layout and help links."""
    if isinstance(error, pydantic.ValidationError):
        return "; ".join(describe(error, None))
    return " ".join(str(error).split())
