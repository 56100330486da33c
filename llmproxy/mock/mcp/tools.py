"""Which answer a tool call gets: the tool's results tried in order, the first whose `match` holds for the
call's arguments (and has `times` left) answers — its answer, or the next of its sequence. A call no result
answers gets why, for the nearest one, as the mock's LLM misses say it.

The argument predicates speak the mock's language: `arguments` compares values as given (objects by the keys
given, as MockServer's "only matching fields"), `argumentsMatch` searches a regular expression in what a JSON
path names (replay's JSON paths, `latestMessageMatches`' expressions)."""

import re
import threading
from dataclasses import dataclass, field
from typing import Any

import orjson

from llmproxy.cassette import jsonpath
from llmproxy.mock.mcp import spec

_EXCERPT = 60


@dataclass(frozen=True, slots=True)
class Picked:
    """The answer a call gets, and which result (1-based) and sequence step gave it, for the log."""

    answer: spec.ToolAnswer
    result: int
    step: int | None = None  # the sequence's answer (1-based); None: the result has no sequence
    exhausted: bool = False  # the sequence was used up and says so (`onExhausted: error`)

    @property
    def source(self) -> str:
        said = f"result {self.result}"
        if self.step is not None:
            said += f" sequence {'exhausted' if self.exhausted else f'step {self.step}'}"
        return said


@dataclass(frozen=True, slots=True)
class Unmatched:
    """No result answers the call: the nearest result and why not."""

    reasons: tuple[str, ...]
    nearest: int

    def explain(self, tool: str) -> str:
        return f"no result of tool {tool} answers these arguments; nearest, result {self.nearest}: " + "; ".join(
            self.reasons
        )


@dataclass(slots=True)
class _Result:
    definition: spec.ToolResult
    paths: tuple[tuple[jsonpath.Path, re.Pattern[str], str], ...]
    served: int = 0


@dataclass(slots=True)
class ToolResults:
    """One tool's results with what each has served; `pick` under a lock, so concurrent calls take turns."""

    results: list[_Result]
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, tool: spec.Tool) -> "ToolResults":
        results = []
        for result in tool.results:
            given = result.match.argumentsMatch if result.match is not None else None
            paths = tuple((jsonpath.parse(path), re.compile(pattern), path) for path, pattern in (given or {}).items())
            results.append(_Result(result, paths))
        return cls(results)

    def served(self) -> tuple[int, ...]:
        """How many calls each result has answered, in order."""
        with self.lock:
            return tuple(result.served for result in self.results)

    def pick(self, arguments: dict[str, Any]) -> Picked | Unmatched:
        refused: list[tuple[int, tuple[str, ...]]] = []
        with self.lock:
            for number, result in enumerate(self.results, 1):
                reasons = _mismatches(result, arguments)
                if reasons:
                    refused.append((number, reasons))
                    continue
                result.served += 1
                return _answer(result, number)
        number, reasons = min(refused, key=lambda refusal: len(refusal[1]))
        return Unmatched(reasons, number)


def _mismatches(result: _Result, arguments: dict[str, Any]) -> tuple[str, ...]:
    definition = result.definition
    reasons = []
    match = definition.match
    if match is not None and match.arguments is not None:
        for key, expected in match.arguments.items():
            if key not in arguments:
                reasons.append(f"$.{key}: expected {_excerpt(expected)}, it is not given")
            elif not _holds(expected, arguments[key]):
                reasons.append(f"$.{key}: expected {_excerpt(expected)}, got {_excerpt(arguments[key])}")
    for path, pattern, written in result.paths:
        found = jsonpath.values(arguments, path)
        if not any(pattern.search(_text(value)) for value in found):
            got = ", ".join(_excerpt(value) for value in found) or "nothing"
            reasons.append(f"{written}: /{pattern.pattern}/ not found in {got}")
    if not reasons and definition.times is not None and result.served >= definition.times:
        reasons.append(f"times: all {definition.times} used")
    return tuple(reasons)


def _holds(expected: Any, given: Any) -> bool:
    """`given` is `expected`, an object holding at least the keys `expected` gives (the rest ignored)."""
    if isinstance(expected, dict):
        return isinstance(given, dict) and all(
            key in given and _holds(value, given[key]) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(given, list)
            and len(given) == len(expected)
            and all(_holds(item, other) for item, other in zip(expected, given, strict=True))
        )
    if isinstance(expected, bool) or isinstance(given, bool):
        return expected is given
    return bool(expected == given)


def sequence_step(served: int, length: int, on_exhausted: str) -> int | None:
    """Which answer of a sequence of `length` the `served`-th matching call gets (0-based), as `onExhausted`
    says once they are used up; None when that is an error. A2A agents' replies step the same way."""
    index = served - 1
    if index < length:
        return index
    if on_exhausted == "loop":
        return index % length
    return None if on_exhausted == "error" else length - 1


def exhausted(length: int) -> str:
    return f"the sequence's {length} answers are used up (onExhausted: error)"


def _answer(result: _Result, number: int) -> Picked:
    definition = result.definition
    sequence = definition.sequence
    if sequence is None:
        return Picked(definition, number)
    index = sequence_step(result.served, len(sequence), definition.onExhausted)
    if index is None:
        answer = spec.ToolAnswer(text=exhausted(len(sequence)), isError=True)
        return Picked(answer, number, len(sequence) + 1, exhausted=True)
    return Picked(sequence[index], number, index + 1)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _excerpt(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"
