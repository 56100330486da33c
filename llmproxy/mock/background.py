"""Responses in background mode, mocked: a create with `background: true` is answered `queued` (the
response object, no output yet), and the lifecycle requests for that id are answered from what the
expectation said — `GET /v1/responses/{id}` gives the completed response (with `?stream=true` its events,
after `starting_after` when given), `POST …/{id}/cancel` and later retrieves a cancelled one, `DELETE` the
deletion. The same Completion serves every step, so the ids a client polls with are the ones it got.

Ids the mock did not create are not answered here: an expectation (or a cassette behind) may know them.
"""

import re
import threading
from dataclasses import dataclass
from typing import Any

import orjson

from llmproxy.chain.incoming import Incoming
from llmproxy.chain.reply import Reply
from llmproxy.model import Completion, Operation, Provider
from llmproxy.providers.base import JsonObject
from llmproxy.providers.openai_responses import RESPONSES
from llmproxy.providers.openai_responses.common import response_id
from llmproxy.providers.openai_responses.encode import response_object

_JSON = ("content-type", "application/json")
_ID = re.compile(r"/responses/(?P<id>[^/]+)(/cancel)?$")


@dataclass(slots=True)
class _Started:
    completion: Completion
    request: JsonObject
    cancelled: bool = False


class BackgroundResponses:
    """The background responses the mock started, by id, for the requests that follow them."""

    def __init__(self) -> None:
        self._started: dict[str, _Started] = {}
        self._lock = threading.Lock()

    @staticmethod
    def starts(request: Incoming) -> bool:
        """Whether a request creates a background response (answered `queued`, its answer kept)."""
        route, body = request.route, request.json
        return (
            route is not None
            and (route.provider, route.operation) == (Provider.OPENAI, Operation.RESPONSES)
            and not route.streaming
            and not route.websocket
            and isinstance(body, dict)
            and body.get("background") is True
        )

    def start(self, request: Incoming, reply: Reply) -> Reply:
        """The queued answer to a create whose full answer is `reply`; other replies (errors) as they are."""
        completion = reply.completion
        if reply.status != 200 or completion is None or completion.error is not None:
            return reply
        body: JsonObject = request.json
        rid = response_id(completion)
        with self._lock:
            self._started[rid] = _Started(completion, body)
        queued = {**response_object(completion, body, in_progress=True), "status": "queued"}
        return Reply(200, (_JSON,), orjson.dumps(queued), notes=(*reply.notes, f"background response {rid} queued"))

    def answer(self, request: Incoming) -> tuple[str, Reply] | None:
        """What a lifecycle request for a response the mock started gets, with a word for the log."""
        route = request.route
        match = _ID.search(request.path) if route is not None else None
        if route is None or match is None or route.provider is not Provider.OPENAI:
            return None
        with self._lock:
            started = self._started.get(match["id"])
            if started is None:
                return None
            if route.operation is Operation.RESPONSE_CANCEL:
                started.cancelled = True
            if route.operation is Operation.RESPONSE_DELETE:
                del self._started[match["id"]]
        rid = match["id"]
        if route.operation is Operation.RESPONSE_DELETE:
            return "deleted", _json({"id": rid, "object": "response", "deleted": True})
        if route.operation not in (Operation.RESPONSE_RETRIEVE, Operation.RESPONSE_CANCEL):
            return None
        if started.cancelled:
            cancelled = {**response_object(started.completion, started.request, in_progress=True)}
            return "cancelled", _json({**cancelled, "status": "cancelled"})
        if not route.streaming:
            return "completed", _json(response_object(started.completion, started.request))
        events = RESPONSES.encode_stream(started.completion, started.request)
        after = _integer(request.query.get("starting_after"))  # the last event the client already has
        timed = tuple((0.0, event) for event in (events if after is None else events[after + 1 :]))
        headers = (("content-type", RESPONSES.stream_media_type), ("cache-control", "no-cache"))
        return "streamed", Reply(200, headers, events=timed, completion=started.completion)


def _json(body: dict[str, Any]) -> Reply:
    return Reply(200, (_JSON,), orjson.dumps(body))


def _integer(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
