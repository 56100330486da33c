"""`llmproxy mock validate --json`."""

from typing import Literal

from pydantic import Field

from llmproxy.mock import spec
from llmproxy.outputs import Document, Part
from llmproxy.words import plural


class Entry(Part):
    kind: Literal["expectation", "conversation"]
    answers: list[str] = Field(
        description="how it answers: respond, error, embedding, rerank, http, script, failover or adversarial"
        " (a conversation: one per turn)"
    )


class MockValidation(Document):
    command: Literal["mock validate"] = "mock validate"
    file: str
    valid: bool = Field(description="the file can be served as it is (exit status 0)")
    errors: list[str] = Field(description="each problem, with the file and the JSON path of the field")
    entries: list[Entry] = Field(description="the file's entries in order; empty when it is not valid")


def validation(file: str, loaded: spec.ExpectationsFile) -> MockValidation:
    entries = [_entry(entry) for entry in loaded.expectations]
    return MockValidation(file=file, valid=True, errors=[], entries=entries)


def invalid(file: str, message: str) -> MockValidation:
    return MockValidation(file=file, valid=False, errors=message.splitlines(), entries=[])


def describe(document: MockValidation) -> str:
    """One line: what the file holds."""
    conversations = [entry for entry in document.entries if entry.kind == "conversation"]
    parts = [plural(len(document.entries) - len(conversations), "expectation")]
    if conversations:
        turns = sum(len(entry.answers) for entry in conversations)
        parts.append(f"{plural(len(conversations), 'conversation')} of {plural(turns, 'turn')}")
    return f"{document.file}: valid, {', '.join(parts)}"


def _entry(entry: spec.Expectation | spec.Conversation) -> Entry:
    if isinstance(entry, spec.Conversation):
        return Entry(kind="conversation", answers=[_answer(turn) for turn in entry.conversation.turns])
    return Entry(kind="expectation", answers=[_answer(entry)])


def _answer(answers: spec.Expectation | spec.Turn) -> str:
    return next(name for name in spec.ANSWER_FIELDS if getattr(answers, name) is not None)
