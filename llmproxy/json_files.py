"""Reading a JSON file a user wrote (expectations, scripts, chaos rules): one error that names the file and
what is wrong with it, in the error class of the part that reads it."""

from pathlib import Path
from typing import Any

import orjson

from llmproxy.errors import LlmproxyError


def read_json(path: Path, what: str, error: type[LlmproxyError]) -> Any:
    """The file's JSON value. Raises `error`: ``x.json: cannot read the {what}: No such file or directory``, or
    ``x.json: not JSON: unexpected character: line 1 column 2 (char 1)``."""
    try:
        return orjson.loads(path.read_bytes())
    except OSError as problem:
        raise error(f"{path}: cannot read the {what}: {problem.strerror or problem}") from problem
    except orjson.JSONDecodeError as problem:
        raise error(f"{path}: not JSON: {problem}") from problem
