"""An exchange stored as what it changes from an earlier one.

Each call of an agent's session repeats the one before it almost field for field: the same provider, model, URL
and headers (a content length apart), the same response status and headers (a date apart), the same message start,
block and stop events around a new text. Stored whole, those fields cost more than what the call adds. So an
exchange may say ``"like": N``: every field it leaves out is exchange N's (which must be one of the `BACK`
exchanges before it), field by field in the exchange and in its ``request``, ``response`` and ``timings``:

* a field it holds is its own; ``null`` says it has none where exchange N has one (the format never writes
  ``null`` for a field otherwise); ``id``, ``like``, ``parts``, ``websocket`` and ``background`` are always its
  own;
* ``headers`` may be ``{"changed": ["content-length: 30903"]}``: exchange N's header lines, the one of each
  name given replaced (the lists have the same names in the same order, and each changed name is there once);
* ``body`` may be ``{"changed": {"messages": […]}}``: exchange N's JSON body (an object with the same keys in
  the same order), the values of the keys given replaced;
* its answer's events may be written as exchange N's (`streams.py`: ``{"like": 3, "set": {…}}``).

`unlike` (the recorder's side) writes an exchange so, against the stored form of an earlier one; `inherit` (the
reader's) gives it back whole, against the earlier one as it was read. What is left out is equal as written, and
so, its shared parts put back, equal as read.
"""

from typing import Any

import orjson

LIKE = "like"
CHANGED = "changed"
BACK = 64  # how many exchanges before its own id an exchange may name: a reader keeps only those
_HEADERS = "headers"
_BODY = "body"
# an exchange's own, always: its id, and the links that group exchanges (a WebSocket connection, a background
# run), which a reader of the file sees on each exchange of the group
_NEVER = frozenset({"id", LIKE, "parts", "websocket", "background"})
_NESTED = ("request", "response", "timings")  # the objects whose fields are left out one by one


class LikenessError(ValueError):
    """An exchange that says it is like another in a way the other cannot give."""


def unlike(exchange: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """`exchange` (a stored exchange) with ``like`` naming `base` and every field `base` holds the same left out."""
    stored: dict[str, Any] = {}
    for key, value in exchange.items():
        stored[key] = value
        if key == "id":
            stored[LIKE] = base["id"]
    for key in list(stored):
        if key in _NEVER:
            continue
        value, was = stored[key], base.get(key)
        if key in _NESTED and isinstance(value, dict) and isinstance(was, dict):
            inner = _object(value, was)
            if inner:
                stored[key] = inner
            else:
                del stored[key]
        elif _same(value, was):
            del stored[key]
    for key in base:
        if key not in exchange and key not in _NEVER:
            stored[key] = None
    return stored


def _object(value: dict[str, Any], was: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, item in value.items():
        if _same(item, was.get(key)) and key in was:
            continue
        if key == _HEADERS and isinstance(item, list) and isinstance(was.get(key), list):
            found[key] = _headers(item, was[key])
        elif (
            key == _BODY
            and _json_object(item)
            and _json_object(was.get(key))
            and list(item["json"]) == list(was[key]["json"])
        ):
            old = was[key]["json"]
            found[key] = {CHANGED: {name: v for name, v in item["json"].items() if not _same(v, old[name])}}
        else:
            found[key] = item
    for key in was:
        if key not in value:
            found[key] = None
    return found


def _headers(lines: list[Any], was: list[Any]) -> Any:
    """Header lines as those of an earlier exchange with some changed, when that is what they are; else whole."""
    if len(lines) != len(was) or not all(isinstance(line, str) for line in (*lines, *was)):
        return lines
    names = [line.partition(": ")[0] for line in was]
    changed = []
    for line, old, name in zip(lines, was, names, strict=True):
        if line.partition(": ")[0] != name:
            return lines
        if line != old:
            if names.count(name) != 1 or not line.startswith(f"{name}: "):
                return lines
            changed.append(line)
    return {CHANGED: changed}


def _json_object(body: Any) -> bool:
    """A body that is a JSON object alone (no other field beside it)."""
    return isinstance(body, dict) and list(body) == ["json"] and isinstance(body["json"], dict)


def inherit(stored: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """The exchange `stored` (read, its parts put back, its stream given back) whole, from `base`, the exchange
    its ``like`` names as it was read. Raises LikenessError."""
    whole = _merged(stored, base, "")
    for key in _NESTED:
        value, was = stored.get(key), base.get(key)
        if isinstance(value, dict) and isinstance(was, dict):
            whole[key] = _merged(value, was, key)
    return whole


def _merged(value: dict[str, Any], was: dict[str, Any], level: str) -> dict[str, Any]:
    """`was`'s fields with `value`'s over them (a null one: none); at the top, not `was`'s own (its id, its links).
    The hot path of reading a long recording: a copy and an update, no more."""
    found = dict(was) if level else {key: item for key, item in was.items() if key not in _NEVER}
    for key, item in value.items():
        if item is None:
            found.pop(key, None)
        elif key == LIKE:
            continue
        elif type(item) is dict and key == _HEADERS:
            found[key] = _changed(item, was.get(key), level)
        elif type(item) is dict and key == _BODY and CHANGED in item:
            found[key] = _body(item, was.get(key), level)
        else:
            found[key] = item
    return found


def _changed(headers: dict[str, Any], was: Any, level: str) -> list[str]:
    changed = headers.get(CHANGED)
    where = f"$.{level}.{_HEADERS}"
    if set(headers) != {CHANGED} or not isinstance(changed, list) or not isinstance(was, list):
        raise LikenessError(f'{where}: expected header lines, or {{"{CHANGED}": [lines]}} of an earlier exchange\'s')
    lines = list(was)
    for line in changed:
        name = line.partition(": ")[0] if isinstance(line, str) else None
        at = [i for i, old in enumerate(lines) if isinstance(old, str) and old.partition(": ")[0] == name]
        if len(at) != 1:
            raise LikenessError(f"{where}: {line!r} changes no header the earlier exchange has once")
        lines[at[0]] = line
    return lines


def _body(body: dict[str, Any], was: Any, level: str) -> dict[str, Any]:
    changed = body[CHANGED]
    where = f"$.{level}.{_BODY}"
    if set(body) != {CHANGED} or not isinstance(changed, dict) or not _json_object(was):
        raise LikenessError(f'{where}: {{"{CHANGED}": …}} of an earlier exchange that has no JSON object body')
    old = was["json"]
    if missing := [key for key in changed if key not in old]:
        raise LikenessError(f"{where}: changes {missing[0]!r}, which the earlier exchange's body does not have")
    return {"json": {key: changed.get(key, value) for key, value in old.items()}}


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (1, 1.0 and true are three values): compared as written."""
    return type(a) is type(b) and (a == b if not isinstance(a, dict | list) else _encoded(a) == _encoded(b))


def _encoded(value: Any) -> bytes:
    return orjson.dumps(value)
