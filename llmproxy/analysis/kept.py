"""The recorded requests a report may need whole later — each session's richest conversation for the appendix,
the run's for `explain` — kept as the cassette stores them: a history's tail after the prefix it shares with
an earlier request, and the parts every turn re-sends (system prompt, tools) once per distinct value. Memory
grows with what the conversations say once, not with what every turn re-sent.
"""

from dataclasses import dataclass
from typing import Any

import orjson

from llmproxy.cassette.decode import decode_request
from llmproxy.cassette.history import history, parse_path, with_list
from llmproxy.cassette.model import Extends, JsonBody, Request
from llmproxy.model import Conversation, Route
from llmproxy.providers.node import Parsed
from llmproxy.providers.registry import chat_codec


@dataclass(frozen=True, slots=True)
class _Kept:
    route: Route | None  # the chat API it speaks (None: not a chat call, kept as history others may extend)
    body: Any  # the JSON body as stored; None when it is not JSON (then `request` holds it)
    extends: Extends | None
    request: Request | None = None


class KeptRequests:
    def __init__(self) -> None:
        self._requests: dict[int, _Kept] = {}
        self._values: dict[str | bytes, Any] = {}  # a re-sent value (its JSON text, or the string) → one copy

    def add(self, exchange_id: int, request: Request, route: Route | None) -> None:
        """Keep a request as stored (its history shared with the request it `extends`)."""
        if not isinstance(request.body, JsonBody):
            self._requests[exchange_id] = _Kept(route, None, request.extends, request)
            return
        body = request.body.json_
        if isinstance(body, dict):
            found = history(body)
            own = found[0][0] if found is not None else None  # the key that holds this request's own tail
            body = {key: value if key == own else self._once(value) for key, value in body.items()}
        self._requests[exchange_id] = _Kept(route, body, request.extends)

    def body(self, exchange_id: int) -> Any:
        """The JSON body as kept (its own history tail; each part every turn re-sends, the one copy of it); None
        when the request was not kept or its body is not JSON."""
        kept = self._requests.get(exchange_id)
        return kept.body if kept is not None else None

    def conversation(self, exchange_id: int) -> Conversation | None:
        """The request with its whole history, decoded; None when it was not kept, its history cannot be
        rebuilt, or it no longer decodes."""
        kept = self._requests.get(exchange_id)
        codec = chat_codec(kept.route) if kept is not None and kept.route is not None else None
        if kept is None or codec is None:
            return None
        try:
            if kept.request is not None:
                return decode_request(codec, kept.request)
            return codec.decode_request(Parsed(self._whole(kept)))
        except ValueError:
            return None

    def _whole(self, leaf: _Kept) -> Any:
        """The stored body with its history rebuilt, each request's tail after the prefix it shares with the
        one it extends, as `history.inflate` does for a whole cassette. Raises ValueError for a reference to a
        request not kept, or to a history too short."""
        if leaf.extends is None:
            return leaf.body
        chain = [leaf]
        while (extends := chain[-1].extends) is not None:
            earlier = self._requests.get(extends.exchange)
            if earlier is None or earlier.body is None:
                raise ValueError(f"exchange {extends.exchange} is not a kept request with a JSON body")
            chain.append(earlier)
        path = parse_path(leaf.extends.path)
        items: list[Any] = []
        for kept in reversed(chain):
            tail = _at(kept.body, parse_path(kept.extends.path) if kept.extends is not None else path)
            if not isinstance(tail, list) or (kept.extends is not None and len(items) < kept.extends.items):
                raise ValueError(f"no history of the length shared at {path}")
            del items[kept.extends.items if kept.extends is not None else 0 :]
            items.extend(tail)
        return with_list(leaf.body, path, items)

    def _once(self, value: Any) -> Any:
        if isinstance(value, str):
            key: str | bytes = value
        elif isinstance(value, dict | list):
            try:
                key = orjson.dumps(value)
            except orjson.JSONEncodeError:
                return value
        else:
            return value
        return self._values.setdefault(key, value)


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value
