"""Structured output: does a mocked text meet the JSON Schema the expectation declares? A blank or malformed
schema, or no text, is "nothing to check" — a check that can never break the answer itself."""

from typing import Any

import jsonschema
import orjson


def schema_violation(text: str | None, schema: dict[str, Any] | str | None) -> str | None:
    """One line saying how the text fails the schema, or None when it conforms or there is nothing to check."""
    if not text or not schema:
        return None
    if isinstance(schema, str):
        try:
            schema = orjson.loads(schema)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(schema, dict):
        return None
    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        validator.check_schema(schema)
    except jsonschema.SchemaError:
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        return f"not JSON: {error}"
    failure = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if failure is None:
        return None
    return " ".join(f"{failure.json_path}: {failure.message}".split())
