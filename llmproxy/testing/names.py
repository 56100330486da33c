"""Where a test's cassette lives: `cassettes/<module>/<test>[<parameters>].json` beside the test module, as
pytest-recording does, with two of its users' complaints answered.

* Short: a parameter id too long for a file name (or with characters a file name cannot hold) keeps a readable
  start and ends in a hash of the whole id, so two ids never share a cassette.
* Stable: pytest names a parameter it cannot print (a dict, a list, an object) by its position (`prompt0`), so
  reordering a parametrize list would hand each case another's cassette. Such a parameter is named by a hash of
  its value's repr instead, when that repr is stable (no memory address); otherwise give it `ids=`.
"""

import hashlib
import re
from enum import Enum
from pathlib import Path
from typing import Any, Final

import pytest

LONGEST: Final = 80  # characters of a test's part of the file name, parameters included
KEPT: Final = 48  # of a parameter id that is too long or unsafe, before its hash
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._=+,@~-]")
_ADDRESS: Final = re.compile(r" at 0x[0-9a-fA-F]+")


def digest(text: str, length: int = 10) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def default_directory(module: Path, root: Path | None) -> Path:
    """`cassettes/<module stem>` beside the module, or under `root` (`--llmproxy-cassette-dir`) by the module's
    own name."""
    if root is None:
        return module.parent / "cassettes" / module.stem
    return root / module.stem


def cassette_path(item: pytest.Item, explicit: str | None, root: Path | None) -> Path:
    """The test's cassette: `explicit` (a path, relative to the test module's cassette folder) or one named from
    the test's node id."""
    module = Path(str(item.path))
    if explicit is not None:
        path = Path(explicit)
        if not path.suffix:
            path = path.with_suffix(".json")
        return path if path.is_absolute() else (root or module.parent / "cassettes") / path
    return default_directory(module, root) / f"{test_name(item)}.json"


def test_name(item: pytest.Item) -> str:
    """`Class.test[ids]`, short and stable (see the module's docstring)."""
    name = getattr(item, "originalname", item.name)
    cls = getattr(item, "cls", None)
    if cls is not None:
        name = f"{cls.__name__}.{name}"
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return name
    ids = stable_ids(callspec.id, callspec.params, callspec.indices)
    if len(name) + len(ids) + 2 > LONGEST or _UNSAFE.search(ids):
        ids = f"{_UNSAFE.sub('_', ids)[:KEPT]}~{digest(ids)}"
    return f"{name}[{ids}]"


def stable_ids(ids: str, params: dict[str, Any], indices: dict[str, int]) -> str:
    """pytest's `ids`, each positional name of a value it could not print (`arg3`) replaced by `arg~<hash>` of
    the value, when its repr does not change between runs."""
    for name, value in params.items():
        positional = f"{name}{indices.get(name, 0)}"
        if _printable(value) or not re.search(rf"(?<![\w.]){re.escape(positional)}(?![\w.])", ids):
            continue
        shown = repr(value)
        if _ADDRESS.search(shown) is None:
            ids = re.sub(rf"(?<![\w.]){re.escape(positional)}(?![\w.])", f"{name}~{digest(shown, 8)}", ids, count=1)
    return ids


def _printable(value: object) -> bool:
    """Whether pytest names this parameter by its value (not its position)."""
    return value is None or isinstance(value, str | bytes | int | float | complex | bool | Enum | re.Pattern)
