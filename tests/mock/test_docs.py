"""Every expectations example in docs/mock.md (and the README's) is valid: for the models and for the
published JSON Schema."""

import re
from pathlib import Path

import jsonschema
import orjson
import pytest
from pydantic import BaseModel

from llmproxy.mock import spec
from llmproxy.mock.spec import ExpectationsFile

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```json\n(.*?)```", (ROOT / "docs" / "mock.md").read_text(), re.DOTALL)
EXAMPLES = [orjson.loads(block) for block in BLOCKS if '"seq"' not in block]  # not the request-log entry
README = re.findall(r"```json\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
EXAMPLES += [orjson.loads(block) for block in README if '"expectations"' in block]
SCHEMA = orjson.loads((ROOT / "docs" / "mock.schema.json").read_bytes())


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{i}" for i in range(len(EXAMPLES))])
def test_a_documented_example_validates(example: dict[str, object]) -> None:
    document = example if "expectations" in example else {"expectations": [example]}
    ExpectationsFile.model_validate(document)
    jsonschema.validate(document, SCHEMA)


def test_the_docs_show_every_kind_of_answer() -> None:
    shown = {key for example in EXAMPLES for key in _keys(example)}
    assert {
        "respond",
        "error",
        "embedding",
        "rerank",
        "http",
        "script",
        "failover",
        "adversarial",
        "conversation",
    } <= shown


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in _keys(item)}
    if isinstance(value, list):
        return {key for item in value for key in _keys(item)}
    return set()


def test_the_docs_show_every_field_in_an_example() -> None:
    fields = {
        field.alias or name
        for model in vars(spec).values()  # the models the expectations file is made of: those spec defines
        if isinstance(model, type) and issubclass(model, BaseModel) and model.__module__ == spec.__name__
        for name, field in model.model_fields.items()
    }
    shown = {key for example in EXAMPLES for key in _keys(example)}
    assert sorted(fields - shown) == []
