"""What an answer gives back to the next request: an agent sends each answer again in the history of its next
call (its text, a tool call's input, its reasoning), so a cassette would store it twice — streamed in the
answer's events, and whole in the next request.

A value an answer gives is named by where it is, the same way for every API, without decoding it: in a JSON body,
the value at a path (``content.0.text``); in a stream, the strings at a path joined across the events that hold
one (``delta.text``: Anthropic's text deltas; ``choices.0.delta.content``: Chat Completions'; ``candidates.0.
content.parts.0.text``: Gemini's), of the events whose grouping fields (`GROUPS`: a content block's ``index``,
the event's ``type``) are those given, and, when asked, that joined text read as JSON (Anthropic's
``partial_json`` of a tool call's input). `answer_values` lists every such value of an answer with its place;
`answer_value` finds the value at a place again, for the reader. Both read an exchange as `model.dump` gives it.
"""

import contextlib
from typing import Any

import orjson

GROUPS = ("type", "index", "output_index", "content_index", "summary_index")  # fields that tell streams apart
_PAYLOADS = ("data", "json", "message")  # an event's parsed JSON, by kind (`model.py`)

type Place = dict[str, Any]  # {"path": "delta.text"} and, for a stream, "when": {…}, and "json": true


def answer_values(exchange: dict[str, Any], min_bytes: int) -> list[tuple[Place, bytes]]:
    """Each value of at least `min_bytes` (as compact JSON) that an exchange's answer gives, with its place,
    as compact JSON; the first place of each value."""
    response = exchange.get("response")
    if not isinstance(response, dict):
        return []
    found: dict[bytes, Place] = {}
    events = response.get("events")
    if isinstance(events, list):
        joined: dict[tuple[tuple[tuple[str, Any], ...], str], list[str]] = {}
        strings: list[tuple[str, str]] = []
        for event in events:
            payload = _payload(event)
            if isinstance(payload, dict):
                when = tuple(_when(payload).items())
                _strings(payload, "", strings)
                for path, text in strings:
                    joined.setdefault((when, path), []).append(text)
                strings.clear()
        shortest = (min_bytes - 2) // 6  # chars: none of them takes more than 6 bytes in JSON (`\u001f`)
        for (when, path), texts in joined.items():
            if sum(map(len, texts)) < shortest:
                continue
            text = "".join(texts)
            place: Place = {"path": path, "when": dict(when)}
            _found(found, orjson.dumps(text), place, min_bytes)
            if text[:1] in ("{", "[") and len(texts) > 1:
                with contextlib.suppress(orjson.JSONDecodeError):
                    _found(found, orjson.dumps(orjson.loads(text)), {**place, "json": True}, min_bytes)
    body = response.get("body")
    if isinstance(body, dict) and "json" in body:
        for path, value in _values(body["json"], ""):
            _found(found, orjson.dumps(value), {"path": path}, min_bytes)
    return [(place, encoded) for encoded, place in found.items()]


def answer_value(exchange: dict[str, Any], place: Any) -> bytes | None:
    """The compact JSON of the value an exchange's answer gives at `place` (`answer_values`); None when it gives
    none there."""
    response = exchange.get("response")
    if not isinstance(response, dict) or not isinstance(place, dict) or not isinstance(place.get("path"), str):
        return None
    keys = place["path"].split(".") if place["path"] else []
    if "when" in place:
        when, texts = place["when"], []
        if not isinstance(when, dict):
            return None
        wanted = tuple(when.items())
        others = tuple(key for key in GROUPS if key not in when)
        scalar = all(type(value) is str or type(value) is int for value in when.values())
        for event in response.get("events") or ():
            payload = _payload(event)
            if type(payload) is not dict:
                continue
            for key, value in wanted:  # most events differ in the first, their type
                if payload.get(key, _NOTHING) != value:
                    break
            else:
                for key in others:  # `_when(payload) == when`, without making a dict for each event
                    if key in payload:
                        grouped = _when(payload) == when
                        break
                else:
                    grouped = scalar
                text = _at(payload, keys) if grouped else None
                if type(text) is str:
                    texts.append(text)
        if not texts:
            return None
        if place.get("json") is True:
            try:
                return orjson.dumps(orjson.loads("".join(texts)))
            except orjson.JSONDecodeError:
                return None
        return orjson.dumps("".join(texts))
    body = response.get("body")
    if not isinstance(body, dict) or "json" not in body:
        return None
    value = _at(body["json"], keys)
    return None if value is None else orjson.dumps(value)


def _found(found: dict[bytes, Place], encoded: bytes, place: Place, min_bytes: int) -> None:
    if len(encoded) >= min_bytes and encoded not in found:
        found[encoded] = place


def _payload(event: Any) -> Any:
    if isinstance(event, dict):
        for key in _PAYLOADS:
            if key in event:
                return event[key]
    return None


_NOTHING = object()


def _when(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: payload[key] for key in GROUPS if key in payload and isinstance(payload[key], str | int)}


def _strings(value: Any, path: str, found: list[tuple[str, str]]) -> None:
    """The strings in a value, each with its path (keys and list positions joined by dots), added to `found`."""
    if isinstance(value, str):
        found.append((path, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            if "." not in key and key not in GROUPS:
                _strings(item, f"{path}.{key}" if path else key, found)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _strings(item, f"{path}.{position}" if path else str(position), found)


def _values(value: Any, path: str) -> list[tuple[str, Any]]:
    """Every string, object and list in a value below its top, each with its path."""
    found: list[tuple[str, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and "." in key:
            continue
        here = f"{path}.{key}" if path else str(key)
        if isinstance(item, str | dict | list):
            found.append((here, item))
            found += _values(item, here)
    return found


def _at(value: Any, keys: list[str]) -> Any:
    for key in keys:
        if type(value) is dict:
            value = value.get(key)
        elif isinstance(value, list) and key.isdecimal() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value
