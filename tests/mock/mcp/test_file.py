"""The `mcpServers` of an expectations file: every example in docs/mcp.md is valid for the models and the
published JSON Schema, every field of the models is documented there, and what is wrong with a file is one
line with its JSON path from `llmproxy mock validate`."""

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from llmproxy.cli import main
from llmproxy.mock.mcp import spec
from llmproxy.mock.spec import ExpectationsFile
from tests.mock.mcp.worked import FILES, PAGE, ROOT

TOOL = "e.json: $.mcpServers[0].tools[0]"  # where the problems of `tool(...)` are
SCHEMA = json.loads((ROOT / "docs" / "mock.schema.json").read_text())


@pytest.mark.parametrize("example", FILES, ids=[f"example-{i}" for i in range(len(FILES))])
def test_a_documented_example_validates(example: dict[str, Any]) -> None:
    ExpectationsFile.model_validate(example)
    jsonschema.validate(example, SCHEMA)


def test_every_field_is_documented() -> None:
    fields = {
        field.alias or name
        for model in vars(spec).values()
        if isinstance(model, type) and issubclass(model, BaseModel) and model.__module__ == spec.__name__
        for name, field in model.model_fields.items()
    }
    assert sorted(name for name in fields if f"`{name}`" not in PAGE and f'"{name}"' not in PAGE) == []


def validate(tmp_path: Path, document: Any) -> tuple[int, str]:
    path = tmp_path / "e.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["mock", "validate", str(path)])
    return result.exit_code, result.stderr.replace(str(path), "e.json")


def tool(**fields: Any) -> dict[str, Any]:
    return {"mcpServers": [{"name": "s", "tools": [{"name": "t", "results": [{"text": "x"}], **fields}]}]}


@pytest.mark.parametrize(
    ("document", "said"),
    [
        (
            tool(results=[{"txt": "x"}]),
            f"{TOOL}.results[0].txt: Extra inputs are not permitted",
        ),
        (
            tool(results=[{}]),
            f"{TOOL}.results[0]: needs text, content, structuredContent, isError or error (or a sequence of them)",
        ),
        (
            tool(inputSchema={"type": "string"}),
            f'{TOOL}.inputSchema: a tool\'s schema describes an object: "type": "object"',
        ),
        (
            tool(inputSchema={"type": "object", "properties": 3}),
            f"{TOOL}.inputSchema: not a valid JSON Schema: $.properties: 3 is not of type 'object'",
        ),
        (
            tool(outputSchema={"type": "object", "required": ["n"]}, results=[{"structuredContent": {"m": 1}}]),
            f"{TOOL}: results[0].structuredContent does not meet the outputSchema: 'n' is a required property",
        ),
        (
            tool(results=[{"match": {"argumentsMatch": {"city": "x"}}, "text": "x"}]),
            f"{TOOL}.results[0].match.argumentsMatch: a JSON path starts with '$': 'city'",
        ),
        (
            tool(results=[{"sequence": [{"text": "a"}], "text": "b"}]),
            f"{TOOL}.results[0]: with a sequence, give text in its answers",
        ),
        (
            tool(results=[{"content": [{"type": "image", "data": "@@", "mimeType": "image/png"}]}]),
            f"{TOOL}.results[0].content[0].data: not base64: Only base64 data is allowed",
        ),
        (
            {"mcpServers": [{"name": "a"}, {"name": "a"}]},
            "e.json: $.mcpServers: two of its MCP servers are 'a': each needs its own",
        ),
        (
            {"mcpServers": [{"name": "a", "url": "mcp.example.com"}]},
            "e.json: $.mcpServers[0].url: not an http(s) URL: 'mcp.example.com'",
        ),
        (
            {"mcpServers": [{"name": "a", "resourceTemplates": [{"uriTemplate": "x://y", "name": "y"}]}]},
            "e.json: $.mcpServers[0].resourceTemplates[0]: the uriTemplate 'x://y' has no {variable}:"
            " make it a resource",
        ),
        ({}, "e.json: $.expectations: Field required"),
    ],
)
def test_what_is_wrong_is_one_line_with_its_json_path(tmp_path: Path, document: Any, said: str) -> None:
    status, stderr = validate(tmp_path, document)
    assert (status, stderr) == (1, said + "\n")


def test_a_valid_file_names_its_servers(tmp_path: Path) -> None:
    status, stderr = validate(tmp_path, FILES[0])
    assert status == 0
    assert stderr == ""  # the line goes to stdout without --json
    result = CliRunner().invoke(main, ["mock", "validate", str(tmp_path / "e.json")])
    assert re.search(
        r"valid, 0 expectations, 1 conversation of 2 turns, MCP server weather \(2 tools, 2 resources, 1 prompt\)",
        result.stdout,
    )
