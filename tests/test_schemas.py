"""The published JSON Schemas in docs/ are what scripts/gen_schemas.py writes from the models."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("gen_schemas", ROOT / "scripts" / "gen_schemas.py")
assert _spec is not None
assert _spec.loader is not None
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


@pytest.mark.parametrize("path", list(gen.SCHEMAS), ids=lambda path: path.name)
def test_the_committed_schema_is_current(path: Path) -> None:
    assert path.read_bytes() == gen.schema(*gen.SCHEMAS[path]), "run scripts/gen_schemas.py"


def test_the_committed_openapi_document_is_current() -> None:
    assert gen.OPENAPI.read_bytes() == gen.openapi_document(), "run scripts/gen_schemas.py"
