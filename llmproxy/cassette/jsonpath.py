"""The small JSONPath subset replay speaks: ``$.a.b[0].c``, ``[*]`` for every item, ``.*`` for every key.

Used to name fields to ignore (`--ignore`, presets, built-in volatile fields), to say where two
requests differ (``$.messages[3].content[0].text``), and to pick the arguments of a mocked MCP tool call a
result matches (``$.city``).
"""

import re
from collections.abc import Callable
from typing import Any

type Step = str | int  # a key, an index, or "*" (every key or item)
type Path = tuple[Step, ...]

_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+|\*)\]|\[\"([^\"]*)\"\]")


def parse(text: str) -> Path:
    """``$.a[0].b`` → ``("a", 0, "b")``. Raises ValueError saying what is wrong."""
    if not text.startswith("$"):
        raise ValueError(f"a JSON path starts with '$': {text!r}")
    steps: list[Step] = []
    position = 1
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None:
            raise ValueError(f"cannot read the JSON path {text!r} at {text[position:]!r}")
        key, index, quoted = match.groups()
        if key is not None:
            steps.append(key)
        elif index is not None:
            steps.append("*" if index == "*" else int(index))
        else:
            steps.append(quoted)
        position = match.end()
    return tuple(steps)


def render(path: Path) -> str:
    """``("messages", 3, "content")`` → ``$.messages[3].content``."""
    parts = ["$"]
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", step) or step == "*":
            parts.append(f".{step}")
        else:
            parts.append(f'["{step}"]')
    return "".join(parts)


def drop(value: Any, path: Path) -> Any:
    """`value` without what `path` names (a new value; the argument is not changed)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and isinstance(head, str):
        keys = list(value) if head == "*" else [head] if head in value else []
        if not keys:
            return value
        copy = dict(value)
        for key in keys:
            if rest:
                copy[key] = drop(copy[key], rest)
            else:
                del copy[key]
        return copy
    if isinstance(value, list) and (head == "*" or isinstance(head, int)):
        indices = range(len(value)) if head == "*" else [head] if isinstance(head, int) and head < len(value) else []
        if not rest:
            return [item for i, item in enumerate(value) if i not in indices]
        copy_list = list(value)
        for i in indices:
            copy_list[i] = drop(copy_list[i], rest)
        return copy_list
    return value


def change(value: Any, path: Path, how: Callable[[Any], Any]) -> Any:
    """`value` with what `path` names replaced by `how` of it (a new value; the argument is not changed)."""
    if not path:
        return how(value)
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and isinstance(head, str):
        keys = list(value) if head == "*" else [head] if head in value else []
        return {key: change(item, rest, how) if key in keys else item for key, item in value.items()}
    if isinstance(value, list) and (head == "*" or isinstance(head, int)):
        return [change(item, rest, how) if head in ("*", i) else item for i, item in enumerate(value)]
    return value


def values(value: Any, path: Path) -> list[Any]:
    """What `path` names in `value`: none when it names nothing there, several through a `*`."""
    if not path:
        return [value]
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and isinstance(head, str):
        keys = list(value) if head == "*" else [head] if head in value else []
        return [found for key in keys for found in values(value[key], rest)]
    if isinstance(value, list) and (head == "*" or isinstance(head, int)):
        items = value if head == "*" else value[head : head + 1] if isinstance(head, int) else []
        return [found for item in items for found in values(item, rest)]
    return []
