"""Reading an expectations file: JSON, validated against the models in `spec`, scripts given by path loaded
too — every problem reported with the file and the JSON path of the offending field."""

from pathlib import Path

import pydantic

from llmproxy.errors import MockError
from llmproxy.json_files import read_json
from llmproxy.mock import spec
from llmproxy.mock.script import load_script
from llmproxy.validation_errors import describe


def load_expectations(path: Path) -> spec.ExpectationsFile:
    """Raises MockError: ``exp.json: $.expectations[2].respond.toolCalls[0].name: Field required``."""
    data = read_json(path, "expectations file", MockError)
    try:
        expectations = spec.ExpectationsFile.model_validate(data)
    except pydantic.ValidationError as error:
        raise MockError("\n".join(f"{path}: {problem}" for problem in describe(error, data))) from error
    return with_scripts(expectations, path.parent)


def with_scripts(expectations: spec.ExpectationsFile, base: Path) -> spec.ExpectationsFile:
    """The expectations with each script named by path (relative to `base`) loaded. Raises MockError for a
    script that cannot be read."""
    entries = tuple(_scripts_loaded(entry, base) for entry in expectations.expectations)
    return expectations.model_copy(update={"expectations": entries})


def _scripts_loaded(entry: spec.Expectation | spec.Conversation, base: Path) -> spec.Expectation | spec.Conversation:
    """The entry with each script named by path replaced by the script: a bad script fails now, at load."""
    if isinstance(entry, spec.Conversation):
        turns = tuple(_script_loaded(turn, base) for turn in entry.conversation.turns)
        return entry.model_copy(update={"conversation": entry.conversation.model_copy(update={"turns": turns})})
    return _script_loaded(entry, base)


def _script_loaded[A: (spec.Expectation, spec.Turn)](answers: A, base: Path) -> A:
    if not isinstance(answers.script, str):
        return answers
    script = Path(answers.script)
    return answers.model_copy(update={"script": load_script(script if script.is_absolute() else base / script)})
