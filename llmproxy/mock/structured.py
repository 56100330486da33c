"""Structured output: does a mocked text meet the JSON Schema the expectation declares? The schema itself is
checked when the expectations file loads (`checked_schema`), so a typo in it is a load error, not an answer
that silently goes unchecked."""

from typing import Any

import jsonschema
import orjson


def checked_schema(schema: dict[str, Any] | str) -> dict[str, Any]:
    """The schema as an object (given as one, or as its JSON text); ValueError saying why it is not a schema."""
    if isinstance(schema, str):
        try:
            schema = orjson.loads(schema)
        except orjson.JSONDecodeError as error:
            raise ValueError(f"not JSON: {error}") from error
    if not isinstance(schema, dict):
        raise ValueError(f"a JSON Schema is an object, not {type(schema).__name__}")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as error:
        raise ValueError(f"not a valid JSON Schema: {error.json_path}: {error.message}") from error
    return schema


def schema_violation(text: str | None, schema: dict[str, Any]) -> str | None:
    """One line saying how the text fails the (checked) schema, or None when it conforms."""
    try:
        value = orjson.loads(text or "")
    except orjson.JSONDecodeError as error:
        return f"not JSON: {error}"
    validator = jsonschema.validators.validator_for(schema)(schema)
    failure = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if failure is None:
        return None
    return " ".join(f"{failure.json_path}: {failure.message}".split())
