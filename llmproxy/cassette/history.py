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
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

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
    prefix of a new list costs one dictionary lookup per item.

    An agent re-sends the same items every turn, so each item is encoded and hashed once, not once a turn:
    the lists indexed last are kept as their JSON, and the items a new list shares with one of them (compared
    as bytes, one `startswith` per step of a binary search) take their digests from it."""

    RECENT: Final = 4  # lists kept for that (an agent's conversation and a few of its subagents')

    def __init__(self) -> None:
        self._prefixes: dict[bytes, int] = {}  # a prefix's running digest (its path first) → the last exchange
        self._recent: deque[_Indexed] = deque(maxlen=self.RECENT)

    def share(self, exchange_id: int, body: Any) -> tuple[Any, Extends | None]:
        """Index a request body and return what to store: the body without the longest history prefix an
        earlier request sent, plus the reference that restores it; or the body as is and None."""
        found = history(body)
        if found is None:
            return body, None
        path, items = found
        chain = self._index(path, items)
        for length in range(len(chain), 0, -1):
            earlier = self._prefixes.get(chain[length - 1])
            if earlier is not None:
                extends = Extends(exchange=earlier, path=path_text(path), items=length)
                stored = with_list(body, path, items[length:])
                break
        else:
            extends, stored = None, body
        self._prefixes.update(dict.fromkeys(chain, exchange_id))
        return stored, extends

    def observe(self, exchange_id: int, body: Any) -> None:
        """Index a whole request body already stored (an existing cassette being appended to)."""
        found = history(body)
        if found is not None:
            self._prefixes.update(dict.fromkeys(self._index(*found), exchange_id))

    def _index(self, path: tuple[str, ...], items: list[Any]) -> list[bytes]:
        """Each prefix's running digest, its items' taken from the recent list that shares the most of them.
        SHA-256, which CPUs compute in hardware (SHA-NI, ARMv8): twice BLAKE2b's speed on the bench machine."""
        encoded = orjson.dumps(items)
        base, shared = None, 0
        for recent in self._recent:
            if recent.path == path and (count := recent.shared(encoded)) > shared:
                base, shared = recent, count
        if base is not None:
            chain, ends = base.chain[:shared], base.ends[:shared]
            digest, offset = chain[-1], ends[-1] + 1
        else:
            chain, ends = [], []
            digest, offset = hashlib.sha256(path_text(path).encode()).digest(), 1
        for item in items[shared:]:
            data = orjson.dumps(item)
            running = hashlib.sha256(digest)
            running.update(data)
            digest = running.digest()
            chain.append(digest)
            offset += len(data)
            ends.append(offset)
            offset += 1  # the comma
        if base is not None and shared == len(base.ends):
            self._recent.remove(base)  # this list holds all it held: it takes its place
        self._recent.append(_Indexed(path, encoded, ends, chain))
        return chain


@dataclass(frozen=True, slots=True)
class _Indexed:
    """A history list indexed recently: its compact JSON, where each item ends in it, and each prefix's digest."""

    path: tuple[str, ...]
    encoded: bytes
    ends: list[int]
    chain: list[bytes]

    def shared(self, encoded: bytes) -> int:
        """How many leading items the list `encoded` (compact JSON) has byte for byte in common with this one.
        Items are JSON values, so equal bytes up to where one of this list's items ends, followed in `encoded`
        by a comma or the closing bracket, are the same items."""
        view = memoryview(self.encoded)

        def same(count: int) -> bool:
            end = self.ends[count - 1]
            return encoded.startswith(view[:end]) and encoded[end : end + 1] in (b",", b"]")

        low, high = 0, len(self.ends)  # same(low) holds (none shared trivially), same(high + 1) is out of range
        if high and same(high):
            return high
        high -= 1
        while low < high:
            middle = (low + high + 1) // 2
            if same(middle):
                low = middle
            else:
                high = middle - 1
        return low


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
