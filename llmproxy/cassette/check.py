"""`llmproxy cassette check`: find anything secret-looking left in files meant to be committed.

Any file is scanned: a JSON document is walked so findings name a JSON path, a JSON-lines file (a journal)
line by line, anything else as text (bytes that are not UTF-8 are read as Latin-1). A finding is a
key-shaped string that is not a placeholder, or a secret header (``["authorization", "…"]`` pairs or
``"authorization: …"`` lines) whose value is not redacted. Secrets are shown masked.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from llmproxy.cassette import secrets


@dataclass(frozen=True, slots=True)
class Finding:
    file: Path
    where: str  # a JSON path, or "line N"
    kind: str
    masked: str

    def __str__(self) -> str:
        return f"{self.file}:{self.where}: {self.kind}: {self.masked}"


def check_file(path: Path) -> list[Finding]:
    """Findings in one file. Raises OSError when it cannot be read."""
    data = path.read_bytes()
    try:
        return [Finding(path, where, kind, masked) for where, kind, masked in _walk(orjson.loads(data), "$")]
    except orjson.JSONDecodeError:
        pass
    try:
        text = data.decode()
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    findings = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            found = list(_walk(orjson.loads(line), f"line {number}: $"))
        except orjson.JSONDecodeError:
            found = [(f"line {number}", kind, masked) for kind, masked in _scan(line)]
        findings += [Finding(path, where, kind, masked) for where, kind, masked in found]
    return findings


def _walk(value: Any, where: str) -> Iterator[tuple[str, str, str]]:
    if isinstance(value, str):
        yield from ((where, kind, masked) for kind, masked in _scan(value))
    elif isinstance(value, list):
        if len(value) == 2 and all(isinstance(v, str) for v in value):
            yield from ((f"{where}[1]", kind, masked) for kind, masked in _secret_header(value[0], value[1]))
        for index, item in enumerate(value):
            yield from _walk(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from ((where, kind, masked) for kind, masked in _scan(key))
            yield from _walk(item, f"{where}.{key}")


def _scan(text: str) -> Iterator[tuple[str, str]]:
    for found in secrets.find(text):
        yield found.kind, secrets.mask(found.secret)
    name, colon, value = text.partition(": ")
    if colon and "\n" not in text:
        yield from _secret_header(name, value)


def _secret_header(name: str, value: str) -> Iterator[tuple[str, str]]:
    lowered = name.lower()
    if lowered not in secrets.SECRET_HEADERS or not value or secrets.PLACEHOLDER.search(value):
        return
    if not any(True for _ in secrets.find(value)):  # a key-shaped value is reported once, by its kind
        yield f"header {lowered}", secrets.mask(value)
