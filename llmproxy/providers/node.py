"""Strict, path-aware reading of untrusted JSON.

Decoders walk request and response bodies through `Node`s, so a wrong shape raises `ParseError` naming
what was decoded and where (``anthropic response: $.content[1].type: expected a string, got 3``)
instead of a KeyError or TypeError from deep inside a codec.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import orjson

from llmproxy.errors import ParseError

_MISSING: Final = object()


@dataclass(frozen=True, slots=True)
class Parsed:
    """A JSON document its caller has already parsed: decoding it need not parse the body again (half the
    cost of decoding a coding agent's request)."""

    value: Any


class Node:
    """A JSON value and where it sits. The path is spelled out only when an error names it, not at every step
    of every decode (a mock or a replay decodes each request it answers)."""

    __slots__ = ("_parent", "_step", "value", "what")

    def __init__(self, value: Any, what: str, path: str | int = "$", parent: "Node | None" = None) -> None:
        self.value = value
        self.what = what
        self._parent = parent
        self._step = path  # under a parent, the key or index; a root: its whole path

    @property
    def path(self) -> str:
        if self._parent is None:
            return str(self._step)
        step = self._step
        return f"{self._parent.path}[{step}]" if isinstance(step, int) else f"{self._parent.path}.{step}"

    @classmethod
    def parse(cls, body: bytes | str | Parsed, what: str) -> "Node":
        """Parse a JSON document; invalid JSON raises `ParseError`."""
        if isinstance(body, Parsed):
            return cls(body.value, what)
        try:
            return cls(orjson.loads(body), what)
        except orjson.JSONDecodeError as exc:
            raise ParseError(f"{what}: not valid JSON: {exc}") from None

    def fail(self, expected: str) -> ParseError:
        shown = "nothing" if self.value is _MISSING else repr(self.value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        path = self.path
        return ParseError(f"{self.what}: {path}: expected {expected}, got {shown}", path)

    # navigation -------------------------------------------------------------------------------
    def __getitem__(self, key: str) -> "Node":
        if isinstance(self.value, dict):
            value = self.value.get(key, _MISSING)
        elif self.present:
            raise self.fail(f"an object with {key!r}")
        else:
            value = _MISSING  # reading under an absent or null value finds nothing
        return Node(value, self.what, key, self)

    def first(self, *keys: str) -> "Node":
        """The first present key among spellings (e.g. camelCase and snake_case)."""
        for key in keys:
            node = self[key]
            if node.present:
                return node
        return self[keys[0]]

    @property
    def present(self) -> bool:
        return self.value is not _MISSING and self.value is not None

    def items(self) -> Iterator["Node"]:
        """The elements of a list (a missing or null list is empty)."""
        if not self.present:
            return iter(())
        if not isinstance(self.value, list):
            raise self.fail("a list")
        return (Node(v, self.what, i, self) for i, v in enumerate(self.value))

    def each(self) -> Iterator["Node"]:
        """The elements of a repeated field, which proto-JSON APIs (Gemini) also accept as one lone value."""
        if self.is_list():
            return self.items()
        return iter((self,)) if self.present else iter(())

    # typed reads ------------------------------------------------------------------------------
    def obj(self) -> dict[str, Any]:
        if not isinstance(self.value, dict):
            raise self.fail("an object")
        return self.value

    def opt_obj(self) -> dict[str, Any] | None:
        return self.obj() if self.present else None

    def string(self) -> str:
        if not isinstance(self.value, str):
            raise self.fail("a string")
        return self.value

    def opt_string(self) -> str | None:
        return self.string() if self.present else None

    def integer(self) -> int:
        """An integer; a float with no fraction counts too (`12.0`: some SDKs and gateways write counts so)."""
        value = self.value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail("an integer")
        return value

    def opt_integer(self, default: int = 0) -> int:
        return self.integer() if self.present else default

    def boolean(self, default: bool = False) -> bool:
        if not self.present:
            return default
        if not isinstance(self.value, bool):
            raise self.fail("true or false")
        return self.value

    def is_string(self) -> bool:
        return isinstance(self.value, str)

    def is_list(self) -> bool:
        return isinstance(self.value, list)
