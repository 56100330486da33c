"""Scripted answers, as the mock's MCP servers and A2A agents both give them: an entry answers the calls its
match lets through, `times` times at most, with its answer or, given a `sequence`, with each of its answers in
turn (`onExhausted` says what follows the last). The first entry that matches answers; a call none answers is
told which entry came nearest and why it did not match, as the mock's LLM misses are.

What an answer is and how a call is matched are each protocol's own (a tool's arguments, a message's text);
the definitions' shape, the turn-taking and the explanation of a miss are here, once."""

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Self, cast
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_EXCERPT = 60
_SCRIPTING = frozenset({"match", "times", "sequence", "onExhausted"})


class Spec(BaseModel):
    """A part of a definition: unknown fields are typos, and nothing changes once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Answer(Spec):
    """One answer a script gives, checked whole when the file loads (`check`)."""

    def check(self) -> None:
        """ValueError unless the answer says something; each kind says what that takes."""

    def check_as_given(self) -> None:
        self.check()

    @model_validator(mode="after")
    def _checked(self) -> Self:
        self.check_as_given()
        return self


class Scripted[Given: Answer, Match: Spec](Answer):
    """An answer of its own, or with `sequence`, answers in turn (the answer fields are then the sequence
    items'), to the calls `match` lets through, `times` times at most. A kind of entry lists this base before its
    answer's: the answer's fields come first (its schema reads as before) and the answer's `check` is called."""

    match: Match | None = None
    times: int | None = Field(default=None, ge=1)
    sequence: tuple[Given, ...] | None = Field(default=None, min_length=1)
    onExhausted: Literal["repeat_last", "loop", "error"] = Field(
        default="repeat_last", description="a sequence used up: its last answer again, from the start, or an error"
    )

    def check_as_given(self) -> None:
        if self.sequence is None:
            self.check()
            return
        own = sorted(self.model_fields_set - _SCRIPTING)
        if own:
            raise ValueError(f"with a sequence, give {', '.join(own)} in its answers")

    @property
    def answers(self) -> tuple[Given, ...]:
        return self.sequence if self.sequence is not None else (cast(Given, self),)


def sequence_step(served: int, length: int, on_exhausted: str) -> int | None:
    """Which answer of a sequence of `length` the `served`-th matching call gets (0-based), as `onExhausted`
    says once they are used up; None when that is an error."""
    index = served - 1
    if index < length:
        return index
    if on_exhausted == "loop":
        return index % length
    return None if on_exhausted == "error" else length - 1


def exhausted(length: int) -> str:
    return f"the sequence's {length} answers are used up (onExhausted: error)"


@dataclass(frozen=True, slots=True)
class Picked[Given: Answer]:
    """The answer a call gets: which entry (1-based) gave it and, for a sequence, which step (1-based; None:
    the entry has none; past the end with `exhausted` when the sequence says it is used up)."""

    answer: Given | None  # None: the sequence is used up
    entry: int
    step: int | None = None

    def said(self, entry: str) -> str:
        """Which answered, for the log: `result 2 sequence step 3` (`entry`: what the protocol calls one)."""
        said = f"{entry} {self.entry}"
        if self.step is not None:
            said += f" sequence {'exhausted' if self.answer is None else f'step {self.step}'}"
        return said


@dataclass(frozen=True, slots=True)
class Unmatched:
    """No entry answers the call: the nearest one and why not."""

    reasons: tuple[str, ...]
    nearest: int

    def explain(self, nothing: str, entry: str) -> str:
        """`no result of tool X answers these arguments; nearest, result 2: …`."""
        return f"{nothing}; nearest, {entry} {self.nearest}: " + "; ".join(self.reasons)


@dataclass(slots=True)
class _Entry[Given: Answer]:
    definition: Scripted[Given, Any]
    served: int = 0


@dataclass(slots=True)
class Script[Given: Answer]:
    """Entries with what each has served; `pick` under a lock, so concurrent calls take turns."""

    entries: list[_Entry[Given]]
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, entries: Sequence[Scripted[Given, Any]]) -> "Script[Given]":
        return cls([_Entry(entry) for entry in entries])

    def served(self) -> tuple[int, ...]:
        """How many calls each entry has answered, in order."""
        with self.lock:
            return tuple(entry.served for entry in self.entries)

    def pick(self, mismatches: Callable[[int], tuple[str, ...]]) -> Picked[Given] | Unmatched:
        """The first entry for which `mismatches(index)` (0-based) finds nothing, and it has `times` left."""
        refused: list[tuple[int, tuple[str, ...]]] = []
        with self.lock:
            for number, entry in enumerate(self.entries, 1):
                definition = entry.definition
                reasons = mismatches(number - 1)
                if not reasons and definition.times is not None and entry.served >= definition.times:
                    reasons = (f"times: all {definition.times} used",)
                if reasons:
                    refused.append((number, reasons))
                    continue
                entry.served += 1
                return _step(definition, entry.served, number)
        number, reasons = min(refused, key=lambda refusal: len(refusal[1]))
        return Unmatched(reasons, number)


def _step[Given: Answer](definition: Scripted[Given, Any], served: int, number: int) -> Picked[Given]:
    sequence = definition.sequence
    if sequence is None:
        return Picked(cast(Given, definition), number)
    index = sequence_step(served, len(sequence), definition.onExhausted)
    if index is None:
        return Picked(None, number, len(sequence) + 1)
    return Picked(sequence[index], number, index + 1)


def compiled(pattern: str, where: str = "") -> str:
    """`pattern` when it is a regular expression; else ValueError saying why (`where` before it)."""
    try:
        re.compile(pattern)
    except re.error as error:
        raise ValueError(f"{where}not a regular expression: {error}") from error
    return pattern


class Placed(Spec):
    """What the mock serves at a path of its own on its base URL (default /KIND/NAME) and, through the proxy,
    at a real server's URL."""

    kind: ClassVar[str]  # the first part of its default path: mcp, a2a

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="its name: its default path, the log")
    path: str | None = Field(
        default=None,
        description="its path on the mock's base URL (default: a server's /mcp/NAME, an agent's /a2a/NAME)",
        pattern=r"^/",
    )
    url: str | None = Field(
        default=None,
        description="a real server's or agent's URL (https://mcp.example.com/mcp), served there through the proxy",
    )

    @field_validator("url")
    @classmethod
    def _a_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {value!r}")
        return value

    @property
    def served_path(self) -> str:
        return self.path or f"/{self.kind}/{self.name}"


def check_places(what: str, placed: Sequence[Placed]) -> None:
    """ValueError unless each of `placed` has a name, a path and a URL of its own."""
    unique(what, [each.name for each in placed])
    unique(f"{what} path", [each.served_path for each in placed])
    unique(f"{what} url", [each.url for each in placed if each.url is not None])


def apart(what: str, placed: Placed, served: Placed) -> None:
    """ValueError naming the clash when `placed` would be served where `served` (another) is."""
    if placed.served_path == served.served_path:
        where, value = "path", placed.served_path
    elif placed.url is not None and placed.url == served.url:
        where, value = "url", placed.url
    else:
        return
    raise ValueError(
        f"{placed.name}: its {where} {value} is {what} {served.name}'s already "
        f"(give it another {where}, or the name {served.name} to replace that {what.split()[-1]})"
    )


def unique(what: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"two of its {what}s are {name!r}: each needs its own")
        seen.add(name)


def cut(text: str) -> str:
    """`text` cut short for a miss's explanation."""
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"
