"""The documents `--json` prints: one JSON object on stdout per command run, schema version 1.

Each command's document is a pydantic model here; docs/json/*.schema.json are generated from them
(scripts/gen_schemas.py) and docs/json-output.md describes them. Field names are camelCase, as in the
report (`llmproxy report --format json`); money is a decimal string of US dollars. Everything a human reads
(progress, the summary) still goes to stderr, so stdout holds the document alone.
"""

from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field


class Document(BaseModel):
    """What every `--json` document has: the command that printed it, and the version of its schema."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schemaVersion: Literal[1] = 1
    command: str = Field(description="the command that printed it, e.g. `cassette check`")


class Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def dumps(document: Document) -> str:
    """The document as indented JSON, keys in the models' order."""
    return orjson.dumps(document.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode()
