"""Write docs/cassette.schema.json, the JSON Schema of cassette format v1, from the pydantic models.

    .venv/bin/python scripts/gen_cassette_schema.py

tests/cassette/test_schema.py fails when the committed schema is not what this script writes.
"""

import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from llmproxy.cassette.model import Cassette  # noqa: E402

SCHEMA_PATH = ROOT / "docs" / "cassette.schema.json"


def schema() -> bytes:
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **Cassette.model_json_schema(by_alias=True, mode="validation"),
        "title": "llmproxy cassette, format version 1",
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n"


if __name__ == "__main__":
    SCHEMA_PATH.write_bytes(schema())
    print(f"wrote {SCHEMA_PATH.relative_to(ROOT)}")
