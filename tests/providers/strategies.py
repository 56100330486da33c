"""Hypothesis strategies shared by the provider tests.

* `texts`, `json_values`: what can travel as JSON (no lone surrogates), biased towards the characters
  that break framing and escaping;
* `completions()`: any Completion a codec may be asked to send: missing id/model/created, every stop
  reason (refusal, content filter, other…), reasoning with or without a signature and a signature alone
  (redacted reasoning), tool arguments that are not a JSON object, usage with cache and reasoning counts,
  and an `error` (a stream that failed part-way) unless told otherwise;
* `every_edit`, `mutated`, `fuzz_values`: structure-aware fuzzing of real documents. `every_edit` removes
  or retypes each value in turn (exhaustive: a decoder that reads any of their keys unchecked is caught);
  `mutated` makes a few random edits at once, with values from `fuzz_values`: arbitrary JSON built from
  the words a codec really uses (`words_in` its documents, `words_of` its source), so that a corrupted
  document often stays plausible enough to reach deep into a decoder.
"""

import ast
import importlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from llmproxy.model import Completion, ErrorKind, ProviderError, StopReason, ToolCall, Usage

type JsonPath = tuple[str | int, ...]

# JSON text cannot hold lone surrogates, so neither can anything that travels as JSON.
CHARACTERS = st.characters(codec="utf-8")
TRICKY = (
    "\n",
    "\r\n",
    "\r",
    "\n\ndata: [DONE]\n\n",
    "event: error\n",
    ": ",
    "\x00",
    "\u2028",
    "\ufeff",
    "e\u0301",
    "🚀",
    '"',
    "\\",
    "{",
    " ",
)
texts = st.text(CHARACTERS, max_size=40) | st.lists(
    st.sampled_from(TRICKY) | st.text(CHARACTERS, max_size=4), max_size=8
).map("".join)

json_scalars = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | texts
)
json_values = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=8
)
"""JSON values that survive a trip through any JSON encoder and decoder unchanged."""

counts = st.integers(0, 10**7)
usages = st.builds(
    Usage,
    input_tokens=counts,
    output_tokens=counts,
    cache_read_tokens=counts,
    cache_write_tokens=counts,
    reasoning_tokens=counts,
    estimated=st.booleans(),
)
NOT_AN_OBJECT = ("", " ", "null", "[1, 2]", '"text"', '{"a":', '{"a": 1', "not json", '{"a": 1}')
tool_calls = st.builds(
    ToolCall,
    id=texts,
    name=texts,
    arguments=st.dictionaries(texts, json_values, max_size=3),
    invalid_arguments=st.none() | st.sampled_from(NOT_AN_OBJECT) | texts,
)
provider_errors = st.builds(
    ProviderError,
    kind=st.sampled_from(ErrorKind),
    message=texts,
    type=st.none() | texts,
    status=st.none() | st.integers(100, 599),
)


maybe_errors = st.none() | provider_errors


def completions(*, error: st.SearchStrategy[ProviderError | None] = maybe_errors) -> st.SearchStrategy[Completion]:
    """Any Completion; `error=st.none()` for the ones a 200 body can carry."""
    return st.builds(
        Completion,
        id=st.none() | texts,
        model=st.none() | texts,
        created=st.none() | st.integers(0, 2**40),
        text=texts,
        tool_calls=st.lists(tool_calls, max_size=3).map(tuple),
        stop_reason=st.none() | st.sampled_from(StopReason),
        reasoning=st.none() | texts,  # with or without a signature,
        reasoning_signature=st.none() | texts,  # and a signature alone: redacted reasoning
        usage=st.none() | usages,
        error=error,
    )


def splits(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    """`data` cut at the given offsets (taken modulo its length + 1)."""
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


# -- structure-aware fuzzing -------------------------------------------------------------------------

_WORD = re.compile(r"[\w.\-:/\[\]]{1,48}")


def words_in(documents: Iterable[Any]) -> set[str]:
    """Every key, and every short string value, inside JSON documents."""
    found: set[str] = set()
    stack = list(documents)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found.update(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and _WORD.fullmatch(value):
            found.add(value)
    return found


def words_of(package: str) -> set[str]:
    """The word-like string literals in a package's source: every key and type name its decoders read."""
    found: set[str] = set()
    for source in Path(importlib.import_module(package).__path__[0]).glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _WORD.fullmatch(node.value):
                found.add(node.value)
    return found


def fuzz_values(words: Iterable[str]) -> st.SearchStrategy[Any]:
    """Arbitrary JSON whose keys and strings are often `words`: wrong types, wrong shapes, right names."""
    vocabulary = st.sampled_from(sorted(words))
    scalars = (
        st.none()
        | st.booleans()
        | st.sampled_from([0, 1, -1, 2**31, 2**63, 2**64, 10**30])
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | texts
        | vocabulary
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(vocabulary | texts, inner, max_size=5),
        max_leaves=16,
    )


def dump(value: Any) -> bytes:
    """JSON bytes for any value `fuzz_values` makes (integers of any size included)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def paths(value: Any, prefix: JsonPath = ()) -> Iterator[JsonPath]:
    """The path of every value inside `value`, itself included."""
    yield prefix
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from paths(inner, (*prefix, index))


@st.composite
def _walk(draw: st.DrawFn, value: Any) -> JsonPath:
    """A path found by descending from the root (so shallow, structural values are picked often)."""
    path: list[str | int] = []
    while isinstance(value, dict | list) and value and (not path or draw(st.integers(0, 3))):
        key = draw(st.sampled_from(sorted(value) if isinstance(value, dict) else range(len(value))))
        path.append(key)
        value = value[key]
    return tuple(path)


def _edit(value: Any, path: JsonPath, new: Any, *, remove: bool) -> Any:
    """`value` with the value at `path` replaced by `new` (or removed), sharing what did not change."""
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = _edit(value[head], rest, new, remove=remove)  # type: ignore[index]
    elif remove:
        del copy[head]  # type: ignore[arg-type]
    else:
        copy[head] = new  # type: ignore[index]
    return copy


WRONG_TYPES: tuple[Any, ...] = (None, {}, [], "", "x", 0, -1, 0.5, True, 2**64)


def every_edit(document: Any) -> Iterator[tuple[JsonPath, Any]]:
    """`document` with each value inside it (never the root) removed, then replaced by one of `WRONG_TYPES`
    (in turn: mostly a wrong type, else an unknown name), one edit at a time: (path, edited document)."""
    for count, path in enumerate(paths(document)):
        if path:
            yield path, _edit(document, path, None, remove=True)
            yield path, _edit(document, path, WRONG_TYPES[count % len(WRONG_TYPES)], remove=False)


@st.composite
def mutated(draw: st.DrawFn, document: Any, values: st.SearchStrategy[Any], *, at_most: int = 3) -> Any:
    """`document` with one to `at_most` values anywhere inside it (never the root) replaced by one of
    `values` or removed (a key from its object, an element from its list)."""
    for _ in range(draw(st.integers(1, at_most))):
        everywhere = [path for path in paths(document) if path]
        if not everywhere:
            break
        path = draw(st.sampled_from(everywhere) | _walk(document))
        remove = draw(st.booleans())
        document = _edit(document, path, None if remove else draw(values), remove=remove)
    return document
