"""History sharing: store a conversation's history once, not once per turn.

An agent re-sends its whole message list every turn, so storing each request whole makes a cassette grow
quadratically. When the list at one of the history paths (`history`) in a request body starts with items an earlier
request in the same cassette sent at the same path, the stored body keeps only the items after that
prefix, and the request records an `Extends` reference; `inflate` rebuilds the exact list on load.

Items are compared by their exact JSON bytes (key order included) as they were sent, before redaction,
so only the stored tail is redacted (an agent's history is re-sent every turn; redacting it every turn would
cost as much as the sharing saves). Redaction works item by item, so what is rebuilt is byte for byte the
redacted request. Bodies already in a cassette being appended to are indexed as stored, redacted.

The paths are the history arrays of every API llmproxy knows, so the same table serves every provider: a
path that holds something else (an embeddings ``input`` list) is shared just as correctly.
"""

import hashlib
from collections.abc import Iterable
from typing import Any

import orjson

from llmproxy.cassette.model import Exchange, Extends, JsonBody
from llmproxy.providers.registry import history_paths


def path_text(path: tuple[str, ...]) -> str:
    return "$." + ".".join(path)


def parse_path(text: str) -> tuple[str, ...]:
    if not text.startswith("$.") or len(text) < 3:
        raise ValueError(f"not a history path: {text!r}")
    return tuple(text[2:].split("."))


def history(body: Any) -> tuple[tuple[str, ...], list[Any]] | None:
    """The first history list in a request body, with its path. The paths are every API's (Anthropic, OpenAI
    Chat, Bedrock Converse, Ollama, Cohere: `messages`; OpenAI Responses: `input`; Gemini: `contents`; Code
    Assist: `request.contents`), as each provider declares it: the first call loads every provider's facts."""
    for path in history_paths():
        value = value_at(body, path)
        if isinstance(value, list):
            return path, value
    return None


class HistoryIndex:
    """Every prefix of every history list seen so far, by a running digest: finding the longest earlier
    prefix of a new list costs one dictionary lookup per item."""

    def __init__(self) -> None:
        self._prefixes: dict[tuple[tuple[str, ...], bytes], int] = {}

    def share(self, exchange_id: int, body: Any) -> tuple[Any, Extends | None]:
        """Index a request body and return what to store: the body without the longest history prefix an
        earlier request sent, plus the reference that restores it; or the body as is and None."""
        found = history(body)
        if found is None:
            return body, None
        path, items = found
        chain = list(_chain(items))
        for length in range(len(chain), 0, -1):
            earlier = self._prefixes.get((path, chain[length - 1]))
            if earlier is not None:
                extends = Extends(exchange=earlier, path=path_text(path), items=length)
                stored = with_list(body, path, items[length:])
                break
        else:
            extends, stored = None, body
        for digest in chain:
            self._prefixes[path, digest] = exchange_id
        return stored, extends

    def observe(self, exchange_id: int, body: Any) -> None:
        """Index a whole request body already stored (an existing cassette being appended to)."""
        found = history(body)
        if found is not None:
            for digest in _chain(found[1]):
                self._prefixes[found[0], digest] = exchange_id


def inflate(exchanges: Iterable[Exchange]) -> list[Exchange]:
    """Exchanges with every shared history rebuilt. Raises ValueError naming the exchange whose reference
    cannot be resolved."""
    bodies: dict[int, Any] = {}
    rebuilt: list[Exchange] = []
    for exchange in exchanges:
        request = exchange.request
        ref = request.extends
        body = request.body.json_ if isinstance(request.body, JsonBody) else None
        if ref is not None:
            body = rebuild(exchange.id, ref, body, bodies)
            request = request.model_copy(update={"body": JsonBody(json=body), "extends": None})
            exchange = exchange.model_copy(update={"request": request})
        if isinstance(request.body, JsonBody):
            bodies[exchange.id] = body
        rebuilt.append(exchange)
    return rebuilt


def rebuild(exchange_id: int, ref: Extends, body: Any, bodies: dict[int, Any]) -> Any:
    """The request body `body` of exchange `exchange_id` with the shared history `ref` names put back, from the
    earlier exchanges' rebuilt JSON request bodies (`bodies`, by id). Raises ValueError."""
    where = f"exchange {exchange_id}: request.extends"
    path = parse_path(ref.path)
    if ref.exchange not in bodies:
        raise ValueError(f"{where}: exchange {ref.exchange} is not an earlier exchange with a JSON request body")
    base = value_at(bodies[ref.exchange], path)
    if not isinstance(base, list) or len(base) < ref.items:
        raise ValueError(f"{where}: exchange {ref.exchange} has no list of {ref.items} items at {ref.path}")
    tail = value_at(body, path)
    if not isinstance(tail, list):
        raise ValueError(f"{where}: the request body has no list at {ref.path}")
    return with_list(body, path, base[: ref.items] + tail)


def _chain(items: list[Any]) -> Iterable[bytes]:
    """Each prefix's running digest. SHA-256, which CPUs compute in hardware (SHA-NI, ARMv8): twice BLAKE2b's
    speed on the bench machine, and a 200 KB history is hashed on every turn it is re-sent."""
    digest = b""
    for item in items:
        running = hashlib.sha256(digest)
        running.update(orjson.dumps(item))
        digest = running.digest()
        yield digest


def value_at(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def with_list(value: dict[str, Any], path: tuple[str, ...], new: Any) -> dict[str, Any]:
    """A copy of `value` with `new` at `path` (only the objects along the path are copied)."""
    head, *rest = path
    return {**value, head: with_list(value[head], tuple(rest), new) if rest else new}
