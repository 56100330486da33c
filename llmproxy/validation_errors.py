"""Pydantic's error locations as JSON paths into the document the user wrote.

Pydantic puts the tags of tagged unions into a location (``('turns', 2, 'error', 'kind')`` for the `kind` of
an error turn), so a location is walked along the data: a step that is not a key or index there is a tag,
and left out — except the last step of a missing or unexpected field, which names that field.
"""

from collections.abc import Mapping
from typing import Any

import pydantic

_NAMES_A_FIELD = frozenset({"missing", "extra_forbidden"})


def json_path(location: tuple[int | str, ...], data: Any, kind: str = "") -> str:
    path = "$"
    node = data
    for position, step in enumerate(location):
        last = position == len(location) - 1
        if isinstance(step, int) and isinstance(node, list) and 0 <= step < len(node):
            path, node = f"{path}[{step}]", node[step]
        elif isinstance(step, str) and isinstance(node, dict) and step in node:
            path, node = f"{path}.{step}", node[step]
        elif last and kind in _NAMES_A_FIELD:
            path += f"[{step}]" if isinstance(step, int) else f".{step}"
    return path


def message(problem: Mapping[str, Any]) -> str:
    """What is wrong, without the "Value error, " pydantic puts before a validator's own words."""
    return str(problem["msg"]).removeprefix("Value error, ")


def describe(error: pydantic.ValidationError, data: Any) -> list[str]:
    """One line per problem, ``$.path: message``. A container's `too_short` that only follows from its
    items failing is left out: the items' own errors say what is wrong."""
    problems = error.errors()
    lines: list[str] = []
    for problem in problems:
        location = tuple(problem["loc"])
        if problem["type"] == "too_short" and any(
            other is not problem and tuple(other["loc"])[: len(location)] == location for other in problems
        ):
            continue
        line = f"{json_path(location, data, problem['type'])}: {message(problem)}"
        if line not in lines:
            lines.append(line)
    return lines
