"""Write the published JSON Schemas from the pydantic models: docs/cassette.schema.json (cassette format v1),
docs/mock.schema.json (the `llmproxy mock` expectations file), docs/chaos.schema.json (`--chaos FILE`) and
docs/json/*.schema.json (what each command's `--json` prints: docs/json-output.md); and the control API's
OpenAPI document, docs/control.openapi.json (docs/control.md).

    .venv/bin/python scripts/gen_schemas.py

tests/test_schemas.py fails when a committed schema is not what this script writes.
"""

import sys
from pathlib import Path

import orjson
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llmproxy.analysis.report import Report  # noqa: E402
from llmproxy.cassette.model import Cassette  # noqa: E402
from llmproxy.control.api import openapi  # noqa: E402
from llmproxy.intercept.rules import ChaosFile  # noqa: E402
from llmproxy.mock.spec import ExpectationsFile  # noqa: E402
from llmproxy.outputs.chaos import ChaosState, ChaosValidation  # noqa: E402
from llmproxy.outputs.check import CassetteCheck  # noqa: E402
from llmproxy.outputs.doctor import Doctor  # noqa: E402
from llmproxy.outputs.explain import Explained  # noqa: E402
from llmproxy.outputs.mcp_check import McpCheck  # noqa: E402
from llmproxy.outputs.run import Run  # noqa: E402
from llmproxy.outputs.validate import MockValidation  # noqa: E402
from llmproxy.outputs.verify import GATES  # noqa: E402

JSON = ROOT / "docs" / "json"

SCHEMAS: dict[Path, tuple[type[BaseModel], str]] = {
    ROOT / "docs" / "cassette.schema.json": (Cassette, "llmproxy cassette, format version 1"),
    ROOT / "docs" / "mock.schema.json": (ExpectationsFile, "llmproxy mock expectations file"),
    ROOT / "docs" / "chaos.schema.json": (ChaosFile, "llmproxy chaos file (--chaos FILE)"),
    JSON / "cassette-check.schema.json": (CassetteCheck, "llmproxy cassette check --json, schema version 1"),
    JSON / "mock-validate.schema.json": (MockValidation, "llmproxy mock validate --json, schema version 1"),
    JSON / "mcp-check.schema.json": (McpCheck, "llmproxy mcp-check --json, schema version 1"),
    JSON / "doctor.schema.json": (Doctor, "llmproxy doctor --json, schema version 1"),
    JSON / "run.schema.json": (Run, "llmproxy record|replay|mock --json, schema version 1"),
    JSON / "chaos-validate.schema.json": (ChaosValidation, "llmproxy chaos validate --json, schema version 1"),
    JSON / "chaos-show.schema.json": (ChaosState, "llmproxy chaos show --json, schema version 1"),
    JSON / "report.schema.json": (Report, "llmproxy report --json (--format json), schema version 1"),
    JSON / "explain.schema.json": (Explained, "llmproxy explain --json (--format json), schema version 1"),
    **{
        JSON / f"verify-{gate}.schema.json": (model, f"llmproxy verify {gate} --json, schema version 1")
        for gate, model in GATES.items()
    },
}

OPENAPI = ROOT / "docs" / "control.openapi.json"


def schema(model: type[BaseModel], title: str) -> bytes:
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **model.model_json_schema(by_alias=True, mode="validation"),
        "title": title,
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


def openapi_document() -> bytes:
    return orjson.dumps(openapi(), option=orjson.OPT_INDENT_2) + b"\n"


if __name__ == "__main__":
    for path, (model, title) in SCHEMAS.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(schema(model, title))
        print(f"wrote {path.relative_to(ROOT)}")
    OPENAPI.write_bytes(openapi_document())
    print(f"wrote {OPENAPI.relative_to(ROOT)}")
