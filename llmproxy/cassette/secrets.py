"""Finding secrets in text with the catalogue's rules, and the placeholders that replace them. Shared by the
redactor (which replaces), `cassette check` (which reports) and the log filter.

A placeholder is ``<redacted:KIND:HASH>``: KIND a short, non-secret label (``sk-ant``, ``jwt``, a header
name), HASH the first 8 hex digits of the secret's SHA-256. The same secret always gives the same
placeholder, in every file and run, so replay can match on the redacted form; 32 bits of a hash reveal
nothing usable about a high-entropy key. No rule matches a placeholder, so redacting twice changes nothing.

Speed (at least 200 MB/s on one core, docs/performance.md#large-answers-keeping-up-in-bounded-memory):
Aho-Corasick passes (the Rust `aho-corasick` crate, through `ahocorasick_rs`) find every keyword in the
lower-cased text's UTF-8; only where one is found does a rule's regular expression run, once, anchored where
its match must start. Text without a keyword, nearly all LLM traffic, costs those passes: the crate's SIMD
prefilter (Teddy) keeps each at GB/s while it holds at most 64 keywords of three characters or more, so the
keywords are split into automata of 64 (scripts/bench/redaction.py).
"""

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import ahocorasick_rs

from llmproxy.cassette.catalogue import (
    RULES,
    SECRET_FIELDS,
    SECRET_HEADER_WORDS,
    SECRET_HEADERS,
    SECRET_QUERY_KEYS,
    Rule,
)

__all__ = [
    "PLACEHOLDER",
    "SECRET_FIELDS",
    "SECRET_HEADERS",
    "SECRET_QUERY_KEYS",
    "Found",
    "Scanner",
    "field_key",
    "find",
    "is_secret_header",
    "kind_of",
    "label",
    "mask",
    "may_contain",
    "placeholder",
    "replace_all",
]

PLACEHOLDER = re.compile(r"<redacted:[a-z0-9\-]{1,32}:[0-9a-f]{8}>")
_SECRET_GROUPS = ("s", "s2", "s3")


@dataclass(frozen=True, slots=True)
class Found:
    kind: str
    start: int  # of the secret itself (a kept context such as "Bearer " excluded)
    end: int
    secret: str


@dataclass(frozen=True, slots=True)
class _Compiled:
    priority: int
    rule: Rule
    regex: re.Pattern[str]
    groups: tuple[str, ...]  # the secret's groups this rule has
    named: bool  # its kind comes from the name it matched (group ``n``)


class Scanner:
    """The rules compiled into one keyword automaton. `markers`: extra keywords that match no rule but make
    `suspect` true (the redactor's own field names, which only a JSON walk can judge)."""

    def __init__(self, rules: Iterable[Rule] = RULES, markers: Iterable[str] = ()) -> None:
        by_keyword: dict[str, list[_Compiled]] = {}
        for priority, rule in enumerate(rules):
            regex = rule.regex
            groups = tuple(group for group in _SECRET_GROUPS if group in regex.groupindex)
            compiled = _Compiled(priority, rule, regex, groups, "n" in regex.groupindex)
            for keyword in rule.keywords:
                by_keyword.setdefault(keyword, []).append(compiled)
        extra = sorted({marker.lower() for marker in markers if marker} - set(by_keyword))
        keywords = [*by_keyword, *extra]
        self._candidates = [by_keyword.get(keyword, []) for keyword in keywords]
        self._first_marker = len(by_keyword)
        leftmost = ahocorasick_rs.MatchKind.LeftmostFirst  # the kind that uses the SIMD prefilter
        self._automata = [
            (first, ahocorasick_rs.BytesAhoCorasick([k.encode() for k in keywords[first : first + 64]], leftmost))
            for first in range(0, len(keywords), 64)
        ]

    def find(self, text: str) -> Iterator[Found]:
        """Every secret in `text`, left to right, without overlaps."""
        return self._found(text, self._hits(text))

    def suspect(self, text: str | bytes) -> bool:
        """Whether `text` (or UTF-8 bytes) holds a secret, or one of the markers (worth a closer look)."""
        if isinstance(text, bytes):
            data = text.lower()
            hits = self._scan(data)
            if not hits:
                return False
            text = text.decode("utf-8", "surrogatepass")
            hits = _characters(hits, data) if len(data) != len(text) else hits
        else:
            hits = self._hits(text)
        if any(index >= self._first_marker for index, _, _ in hits):
            return True
        return next(self._found(text, hits), None) is not None

    def keywords(self, data: bytes) -> list[tuple[int, int]]:
        """Where in UTF-8 `data` keywords (of secrets, or markers) are, as (start, end) byte offsets, non-
        overlapping, left to right: bytes that overlap none hold no secret and no marker, and neither does any
        part of them. One pass over a whole stream's events finds those that need no closer look."""
        return sorted((start, end) for _, start, end in self._scan(data.lower()))

    def kind_of(self, secret: str) -> str | None:
        """The kind of a whole string that is a key of a known shape (not found by its context)."""
        found = next(self.find(secret), None)
        if found is not None and found.start == 0 and found.end == len(secret) and found.kind in _SHAPES:
            return found.kind
        return None

    def replace_all(self, text: str) -> str:
        """`text` with every secret replaced by its placeholder."""
        parts: list[str] = []
        last = 0
        for found in self.find(text):
            parts.append(text[last : found.start])
            parts.append(placeholder(found.secret, found.kind))
            last = found.end
        if not parts:
            return text
        parts.append(text[last:])
        return "".join(parts)

    def _hits(self, text: str) -> list[tuple[int, int, int]]:
        """(keyword index, start, end) of every keyword, positions in `text`."""
        if not text:
            return []
        data = text.encode("utf-8", "surrogatepass").lower()  # ASCII letters only: the same length
        hits = self._scan(data)
        return _characters(hits, data) if hits and len(data) != len(text) else hits

    def _scan(self, data: bytes) -> list[tuple[int, int, int]]:
        return [
            (first + index, start, end)
            for first, automaton in self._automata
            for index, start, end in automaton.find_matches_as_indexes(data)
        ]

    def _found(self, text: str, hits: list[tuple[int, int, int]]) -> Iterator[Found]:
        if not hits:
            return
        starts = sorted(
            (start - compiled.rule.back, compiled.priority, compiled)
            for index, start, _ in hits
            for compiled in self._candidates[index]
            if start >= compiled.rule.back
        )
        done = 0
        for start, _, compiled in starts:
            if start < done or _in_placeholder(text, start):
                continue
            match = compiled.regex.match(text, start)
            if match is None:
                continue
            group = next((group for group in compiled.groups if match[group] is not None), None)
            secret = match[group] if group else match[0]
            if "<redacted:" in secret or (compiled.rule.verify is not None and not compiled.rule.verify(secret)):
                continue
            kind = label(match["n"]) if compiled.named else compiled.rule.kind
            if group:  # found by its context: a key of a known shape still says what it is
                kind = self.kind_of(secret) or kind
            yield Found(kind, match.start(group or 0), match.end(group or 0), secret)
            done = match.end()


def _in_placeholder(text: str, at: int) -> bool:
    """Whether `at` is inside a placeholder: nothing there is a secret (``<redacted:x-api-key:0011aabb>``)."""
    opening = text.rfind("<redacted:", max(0, at - 52), at + 1)
    if opening < 0:
        return False
    match = PLACEHOLDER.match(text, opening)
    return match is not None and at < match.end()


def _characters(hits: list[tuple[int, int, int]], data: bytes) -> list[tuple[int, int, int]]:
    """Hits at byte offsets of UTF-8 `data`, at character offsets (keywords are ASCII: one byte a character)."""
    converted, byte, char = [], 0, 0
    for index, start, end in sorted(hits, key=lambda hit: hit[1]):
        char += len(data[byte:start].decode("utf-8", "surrogatepass"))
        byte = start
        converted.append((index, char, char + end - start))
    return converted


_SHAPES = frozenset(rule.kind for rule in RULES if "(?P<" not in rule.pattern)
DEFAULT = Scanner()


def find(text: str) -> Iterator[Found]:
    return DEFAULT.find(text)


def replace_all(text: str) -> str:
    return DEFAULT.replace_all(text)


def may_contain(text: str) -> bool:
    """Whether `text` holds a secret of any kind."""
    return DEFAULT.suspect(text)


def kind_of(secret: str) -> str | None:
    return DEFAULT.kind_of(secret)


def field_key(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def is_secret_header(name: str) -> bool:
    """Whether a header's value is secret by its name alone (a name with a secret word in it counts)."""
    lowered = name.lower()
    if lowered in SECRET_HEADERS:
        return True
    return _HEADER_NAME.fullmatch(lowered) is not None and not SECRET_HEADER_WORDS.isdisjoint(
        re.split(r"[-_]", lowered)
    )


_HEADER_NAME = re.compile(r"[a-z0-9_\-]+")


def label(name: str) -> str:
    """A placeholder kind from a header or field name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:32] or "secret"


def placeholder(secret: str, kind: str) -> str:
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"<redacted:{kind}:{digest}>"


def mask(secret: str) -> str:
    """A secret shown in a report without revealing it: at most 6 characters, at most a third of it."""
    return f"{secret[: min(6, len(secret) // 3)]}…({len(secret)} chars)"
