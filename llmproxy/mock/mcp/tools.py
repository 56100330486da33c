"""Which answer a tool call gets: the tool's results tried in order (`llmproxy.mock.scripted`), the first whose
`match` holds for the call's arguments (and has `times` left) answers — its answer, or the next of its
sequence. A call no result answers gets why, for the nearest one, as the mock's LLM misses say it.

The argument predicates speak the mock's language: `arguments` compares values as given (objects by the keys
given, as MockServer's "only matching fields"), `argumentsMatch` searches a regular expression in what a JSON
path names (replay's JSON paths, `latestMessageMatches`' expressions)."""

import re
from typing import Any

import orjson

from llmproxy.cassette import jsonpath
from llmproxy.mock.mcp import spec
from llmproxy.mock.scripted import Picked, Script, Unmatched, cut, exhausted

type _Searched = tuple[tuple[jsonpath.Path, re.Pattern[str], str], ...]


class ToolResults:
    """One tool's results with what each has served; concurrent calls take turns."""

    def __init__(self, tool: spec.Tool) -> None:
        self.tool = tool.name
        self._results = tool.results
        self._script = Script.of(tool.results)
        self._searched: list[_Searched] = []
        for result in tool.results:
            given = result.match.argumentsMatch if result.match is not None else None
            self._searched.append(
                tuple((jsonpath.parse(path), re.compile(pattern), path) for path, pattern in (given or {}).items())
            )

    def served(self) -> tuple[int, ...]:
        """How many calls each result has answered, in order."""
        return self._script.served()

    def pick(self, arguments: dict[str, Any]) -> tuple[spec.ToolAnswer, str] | str:
        """The answer `arguments` get and which result gave it (`result 2 sequence step 1`), or why no result
        answers them."""
        picked = self._script.pick(lambda index: _mismatches(self._results[index], self._searched[index], arguments))
        if isinstance(picked, Unmatched):
            return picked.explain(f"no result of tool {self.tool} answers these arguments", "result")
        return _answer(picked), picked.said("result")


def _answer(picked: Picked[spec.ToolAnswer]) -> spec.ToolAnswer:
    if picked.answer is not None:
        return picked.answer
    return spec.ToolAnswer(text=exhausted((picked.step or 1) - 1), isError=True)


def _mismatches(result: spec.ToolResult, searched: _Searched, arguments: dict[str, Any]) -> tuple[str, ...]:
    reasons = []
    match = result.match
    if match is not None and match.arguments is not None:
        for key, expected in match.arguments.items():
            if key not in arguments:
                reasons.append(f"$.{key}: expected {_excerpt(expected)}, it is not given")
            elif not _holds(expected, arguments[key]):
                reasons.append(f"$.{key}: expected {_excerpt(expected)}, got {_excerpt(arguments[key])}")
    for path, pattern, written in searched:
        found = jsonpath.values(arguments, path)
        if not any(pattern.search(_text(value)) for value in found):
            got = ", ".join(_excerpt(value) for value in found) or "nothing"
            reasons.append(f"{written}: /{pattern.pattern}/ not found in {got}")
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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _excerpt(value: Any) -> str:
    return cut(orjson.dumps(value).decode())
