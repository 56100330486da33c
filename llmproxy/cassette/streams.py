"""A stream's events stored compactly: timings in one column, and each run of like events written once.

A streamed answer is mostly events that repeat one envelope and differ in a value or two: Anthropic's
``{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"…"}}``, a Chat Completions
chunk's id, model and fingerprint around one ``content``, a Responses delta's item id around its text and
sequence number. Stored event by event, the envelope and each event's timing cost more than the text. So a
response's ``events`` are stored as its ``stream``:

    "stream": {
      "t_ms": [412.5, 413.1, 430.0],
      "events": [
        {"event":"message_start","data":{…}},
        {"event":"content_block_delta","data":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}},"vary":["data.delta.text"]},
        ["lo"]
      ]
    }

``t_ms`` holds each event's arrival offset, in order (a re-recording changes that one line). Each item of
``events`` is an event as the ``events`` list holds it, without its ``t_ms`` (`model.py`: ``event``/``data``,
``json``, ``message``, ``text``, ``base64``); one that says ``vary`` starts a run, and each list after it is an
event of that run: the run's first event with the values at its ``vary`` paths (keys and list positions joined
by dots, as `answers.py` names them) replaced, in order, by the list's items. Nothing else differs, so every
event is exactly what was recorded, and replay serves the same bytes. A run goes on past events that are not
in it (a ``ping`` among the deltas) until another starts.

`compact_stream` writes this form; `expand_stream` gives the ``events`` back (`parts.py` does it for every
reader). A ``{"$part": …}`` object in an event is a value like a string: a run may vary it, never what is in it.
"""

from typing import Any

T_MS = "t_ms"
VARY = "vary"
EVENTS = "events"
STREAM = "stream"

type Leaves = tuple[tuple[str, ...], list[Any]]  # the paths of an event's values, and the values


class StreamError(ValueError):
    """A stored stream that does not say which events it holds (a hand edit, a bad merge)."""


def compact_stream(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Stored events (each with its ``t_ms``) in the compact form; None when one has no number for its time."""
    times = [event.get(T_MS) for event in events]
    if not all(isinstance(t, float) for t in times):
        return None
    bare = [{key: value for key, value in event.items() if key != T_MS} for event in events]
    flat = [_leaves(event) for event in bare]
    stored: list[Any] = []
    run: _Run | None = None
    for at, event in enumerate(bare):
        leaves = flat[at]
        row = run.row(leaves) if run is not None and leaves is not None else None
        if row is not None:
            stored.append(row)
            continue
        after = flat[at + 1] if at + 1 < len(flat) else None
        varies = _differences(leaves, after) if leaves is not None and after is not None else None
        if varies:
            run = _Run(leaves, varies)  # type: ignore[arg-type]
            stored.append({**event, VARY: [leaves[0][i] for i in varies]})  # type: ignore[index]
        else:
            stored.append(event)
    return {T_MS: times, EVENTS: stored}


def expand_stream(stream: Any) -> list[dict[str, Any]]:
    """The events a compact stream holds, each with its ``t_ms``, as the ``events`` list holds them. Raises
    StreamError."""
    if not isinstance(stream, dict) or set(stream) != {T_MS, EVENTS}:
        raise StreamError(f'$.response.{STREAM}: expected an object of "{T_MS}" and "{EVENTS}"')
    times, items = stream[T_MS], stream[EVENTS]
    if not isinstance(times, list) or not isinstance(items, list) or len(times) != len(items):
        raise StreamError(f"$.response.{STREAM}: expected as many times as events")
    events: list[dict[str, Any]] = []
    first: dict[str, Any] = {}  # the run's first event, and the keys (or list positions) of each path it varies
    steps: list[list[str | int]] = []
    for t_ms, item in zip(times, items):  # noqa: B905 (as long: checked above). The hot loop of reading a cassette: no more than needed
        kind = type(item)
        if kind is list:
            if len(item) != len(steps) or not steps:
                said = f"a run of {len(steps)} values" if steps else "no run before it"
                raise StreamError(f"{_at(events)}: {len(item)} values, {said}")
            event = {T_MS: t_ms, **first}
            for keys, value in zip(steps, item):  # noqa: B905 (as long: checked above)
                inner: Any = event
                for key in keys[:-1]:  # a copy of each object or list on the way: the rest is shared
                    inner[key] = inner = inner[key].copy()
                inner[keys[-1]] = value
            events.append(event)
        elif kind is not dict:
            raise StreamError(f"{_at(events)}: expected an event or a list of values")
        elif VARY in item:
            first = dict(item)
            steps = _steps(first, first.pop(VARY), _at(events))
            events.append({T_MS: t_ms, **first})
        else:
            events.append({T_MS: t_ms, **item})
    return events


def _at(events: list[dict[str, Any]]) -> str:
    """Where the next event is stored, for an error."""
    return f"$.response.{STREAM}.{EVENTS}[{len(events)}]"


def _steps(event: dict[str, Any], paths: Any, where: str) -> list[list[str | int]]:
    """Each path of a run as the keys and list positions that lead to its value in the run's first event. Raises
    StreamError when one leads nowhere."""
    if not isinstance(paths, list) or not paths or not all(isinstance(path, str) for path in paths):
        raise StreamError(f"{where}.{VARY}: expected a list of paths")
    found: list[list[str | int]] = []
    for path in paths:
        value: Any = event
        keys: list[str | int] = []
        for key in path.split("."):
            if isinstance(value, dict) and key in value:
                keys.append(key)
                value = value[key]
            elif isinstance(value, list) and key.isdecimal() and int(key) < len(value):
                keys.append(int(key))
                value = value[int(key)]
            else:
                raise StreamError(f"{where}: no value at {path!r}")
        found.append(keys)
    return found


def _leaves(value: Any) -> Leaves | None:
    """Each value in an event that holds no other (a ``{"$part": …}`` reference counts as one), in order: their
    paths and the values, apart, so that two events' shapes compare in one step; None when a key cannot be
    named in a path (empty, or holding a dot)."""
    paths: list[str] = []
    values: list[Any] = []
    if not _collect(value, "", paths, values):
        return None
    return tuple(paths), values


def _collect(value: Any, path: str, paths: list[str], values: list[Any]) -> bool:
    """`_leaves` of `value` at `path`, added to `paths` and `values`; False when a key cannot be named."""
    if isinstance(value, dict) and value and not (len(value) == 1 and "$part" in value):
        for key, item in value.items():
            if not key or "." in key or not _collect(item, f"{path}.{key}" if path else key, paths, values):
                return False
        return True
    if isinstance(value, list) and value:
        for position, item in enumerate(value):
            if not _collect(item, f"{path}.{position}" if path else str(position), paths, values):
                return False
        return True
    paths.append(path)
    values.append(value)
    return True


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: 1, 1.0 and true are three values."""
    return type(a) is type(b) and a == b


def _differences(leaves: Leaves, other: Leaves) -> list[int] | None:
    """Where two events of the same shape differ (positions in their leaves); None when their shapes differ or
    nothing does."""
    if leaves[0] != other[0]:
        return None
    found = [i for i, (a, b) in enumerate(zip(leaves[1], other[1], strict=True)) if not _same(a, b)]
    return found or None


class _Run:
    """A run's first event's leaves, and the positions where the run's events differ from it."""

    __slots__ = ("first", "fixed", "paths", "varies")

    def __init__(self, first: Leaves, varies: list[int]) -> None:
        self.paths, self.first = first
        self.varies = varies
        varying = set(varies)
        self.fixed = [i for i in range(len(self.first)) if i not in varying]

    def row(self, leaves: Leaves) -> list[Any] | None:
        """The event as a list of the run's varying values, when it differs from the run's first event there
        only."""
        paths, values = leaves
        if paths != self.paths:
            return None
        first = self.first
        for i in self.fixed:
            if not _same(first[i], values[i]):
                return None
        return [values[i] for i in self.varies]
