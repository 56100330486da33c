"""The `a2aAgents` of an expectations file: the examples of docs/a2a.md are valid for the models and the
published JSON Schema, every field of the models is documented there, and what is wrong with a file is one
line with its JSON path from `llmproxy mock validate`."""

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from llmproxy.cli import main
from llmproxy.mock.a2a import spec
from llmproxy.mock.spec import ExpectationsFile
from tests.mock.a2a.worked import FILES, PAGE, ROOT, WORKED

SCHEMA = json.loads((ROOT / "docs" / "mock.schema.json").read_text())
AGENT = "e.json: $.a2aAgents[0]"


@pytest.mark.parametrize("example", FILES, ids=[f"example-{i}" for i in range(len(FILES))])
def test_a_documented_example_validates(example: dict[str, Any]) -> None:
    ExpectationsFile.model_validate(example)
    jsonschema.validate(example, SCHEMA)


def test_every_field_is_documented() -> None:
    fields = {
        name
        for model in vars(spec).values()
        if isinstance(model, type) and issubclass(model, BaseModel) and model.__module__ == spec.__name__
        for name in model.model_fields
    }
    assert sorted(name for name in fields if f"`{name}`" not in PAGE and f'"{name}"' not in PAGE) == []


def validate(tmp_path: Path, document: Any) -> tuple[int, str, str]:
    path = tmp_path / "e.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["mock", "validate", str(path)])
    return result.exit_code, result.stdout.replace(str(path), "e.json"), result.stderr.replace(str(path), "e.json")


def test_the_worked_example_is_described_as_the_page_says(tmp_path: Path) -> None:
    status, said, _ = validate(tmp_path, WORKED)
    assert status == 0
    described = said.strip().replace("e.json", "agents.json")
    assert " ".join(described.split()) in " ".join(PAGE.split())


def test_a_typo_in_the_worked_example_is_named_as_the_page_says(tmp_path: Path) -> None:
    document = json.loads(json.dumps(WORKED).replace('"textContains": "hello"', '"textContain": "hello"'))
    status, _, said = validate(tmp_path, document)
    assert status == 1
    assert said.strip().replace("e.json", "agents.json") in " ".join(PAGE.split())


def agent(**fields: Any) -> dict[str, Any]:
    return {"a2aAgents": [{"name": "a", "replies": [{"message": "hi"}], **fields}]}


@pytest.mark.parametrize(
    ("document", "said"),
    [
        (agent(replies=[{"mesage": "hi"}]), f"{AGENT}.replies[0].mesage: Extra inputs are not permitted"),
        (
            agent(replies=[{"states": ["completed", "working"]}]),
            f"{AGENT}.replies[0]: states[0]: completed ends the task: only the last state may",
        ),
        (agent(replies=[{"states": ["done"]}]), f"{AGENT}.replies[0].states[0]: Input should be 'submitted',"),
        (
            agent(replies=[{"message": "hi", "artifacts": [{"text": "x"}]}]),
            f"{AGENT}.replies[0]: a message answers without a task: it takes no states or artifacts",
        ),
        (
            agent(replies=[{"artifacts": [{"parts": [{"text": "x", "data": {}}]}]}]),
            f"{AGENT}.replies[0].artifacts[0].parts[0]: a part is text, data or file, one of them, not text and data",
        ),
        (
            agent(replies=[{"match": {"textMatches": "("}, "message": "x"}]),
            f"{AGENT}.replies[0].match.textMatches: not a regular expression: missing ), unterminated subpattern",
        ),
        (agent(replies=[]), f"{AGENT}.replies: Tuple should have at least 1 item"),
        (agent(url="agents.example.com"), f"{AGENT}.url: not an http(s) URL: 'agents.example.com'"),
        (
            {"a2aAgents": [agent()["a2aAgents"][0], agent()["a2aAgents"][0]]},
            "e.json: $.a2aAgents: two of its A2A agents are 'a': each needs its own",
        ),
    ],
)
def test_a_mistake_is_one_line_with_its_json_path(tmp_path: Path, document: Any, said: str) -> None:
    status, _, stderr = validate(tmp_path, document)
    assert status == 1
    assert stderr.startswith(said), stderr
    assert "Traceback" not in stderr
