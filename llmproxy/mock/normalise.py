"""Prompt normalisation before the text predicates (MockServer's NormalizationOptions): agents assemble
prompts dynamically, so exact text is brittle. Pure and idempotent, so it never makes a test flaky."""

import re
from typing import Any

import orjson

from llmproxy.mock.spec import Normalization

_DEFAULTS = Normalization()
_VOLATILE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"  # ISO-8601 timestamps
    r"|\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"  # UUIDs
    r"|\b(?:req|msg|call|toolu|chatcmpl|resp|run|fc|rs|srvtoolu)[_-][A-Za-z0-9]{6,}\b"  # prefixed provider ids
)
"""What `dropBuiltInVolatileFields` strips: timestamps, UUIDs, and the ids providers and SDKs generate
(Anthropic `msg_`/`toolu_`/`req_`/`srvtoolu_`, OpenAI `chatcmpl-`/`call_`/`resp_`/`fc_`/`rs_`/`run_`)."""


def normalise(text: str, options: Normalization | None) -> str:
    """In an order that makes it idempotent: case and volatile values first, whitespace next (which may make
    a prompt parse as JSON), the JSON form last (compact, so there is no whitespace left to collapse)."""
    options = options or _DEFAULTS
    if options.lowercase:
        text = text.lower()
    if options.dropBuiltInVolatileFields:
        text = _VOLATILE.sub("", text)
    if options.collapseWhitespace is not False:
        text = " ".join(text.split())  # runs of whitespace (str.isspace, as regular expressions' \s) to one space
    if options.sortJsonKeys is not False or options.dropVolatileFields:
        text = _json_normalised(text, options.sortJsonKeys is not False, frozenset(options.dropVolatileFields))
    return text


def _json_normalised(text: str, sort: bool, drop: frozenset[str]) -> str:
    """A JSON object or array prompt, re-serialised compactly (keys sorted, named fields dropped); other text
    as it is."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return text
    return orjson.dumps(_without(value, drop), option=orjson.OPT_SORT_KEYS if sort else 0).decode()


def _without(value: Any, drop: frozenset[str]) -> Any:
    if not drop:
        return value
    if isinstance(value, dict):
        return {key: _without(item, drop) for key, item in value.items() if key not in drop}
    if isinstance(value, list):
        return [_without(item, drop) for item in value]
    return value
