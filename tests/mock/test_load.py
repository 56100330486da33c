"""Reading expectations files: every problem named with the file and the JSON path of the offending field,
scripts named by path loaded (relative to the file) before anything runs."""

import json
import shutil
from pathlib import Path

import pytest

from llmproxy.errors import MockError
from llmproxy.mock import spec
from llmproxy.mock.load import load_expectations

FIXTURES = Path(__file__).parent / "fixtures"


def write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "e.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            {"respond": {"toolCalls": [{"arguments": {}}]}},
            "$.expectations[0].respond.toolCalls[0].name: Field required",
        ),
        ({"respond": {"text": "a"}, "error": {"status": 500}}, "$.expectations[0]: needs exactly one of"),
        ({"respond": {"txt": "a"}}, "$.expectations[0].respond.txt: Extra inputs are not permitted"),
        (
            {"match": {"latestMessageMatches": "("}, "respond": {}},
            "$.expectations[0].match.latestMessageMatches: not a regular expression",
        ),
        ({"error": {"status": 200}}, "$.expectations[0].error.status: Input should be greater than or equal to 400"),
        (
            {"script": {"turns": [{"type": "error", "kind": "nope"}]}},
            "$.expectations[0].script.turns[0].kind: Input should be 'rate_limit'",
        ),
        (
            {"respond": {"text": "{}", "outputSchema": "{not json"}},
            "$.expectations[0].respond.outputSchema: not JSON",
        ),
        (
            {"respond": {"text": "{}", "outputSchema": {"type": "objekt"}}},
            "$.expectations[0].respond.outputSchema: not a valid JSON Schema: $.type:",
        ),
        (
            {"respond": {"text": "{}", "enforceOutputSchema": True}},
            "$.expectations[0].respond: enforceOutputSchema needs an outputSchema",
        ),
        (
            {"conversation": {"turns": [{"respond": {}}, {"respond": {"physics": {"jitter": 2}}}]}},
            "$.expectations[0].conversation.turns[1].respond.physics.jitter: Input should be less than or equal to 1",
        ),
    ],
)
def test_a_problem_is_one_line_with_its_json_path(tmp_path: Path, entry: object, problem: str) -> None:
    path = write(tmp_path, {"expectations": [entry]})
    with pytest.raises(MockError) as raised:
        load_expectations(path)
    (line,) = str(raised.value).splitlines()
    assert line.startswith(f"{path}: {problem}")


def test_not_json_and_missing_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"expectations": [')
    with pytest.raises(MockError, match=r"broken.json: not JSON"):
        load_expectations(broken)
    with pytest.raises(MockError, match=r"missing.json: cannot read the expectations file"):
        load_expectations(tmp_path / "missing.json")


def test_a_script_path_is_loaded_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    shutil.copy(FIXTURES / "llmsim-script.json", tmp_path / "scripts" / "agent.json")
    loaded = load_expectations(write(tmp_path, {"expectations": [{"script": "scripts/agent.json"}]}))
    (entry,) = loaded.expectations
    assert isinstance(entry, spec.Expectation)
    assert isinstance(entry.script, spec.Script)
    assert len(entry.script.turns) == 6


def test_a_bad_script_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"turns": [{"type": "tool_calls", "calls": []}]}))
    with pytest.raises(MockError, match=r"s.json: \$.turns\[0\].calls: Tuple should have at least 1 item"):
        load_expectations(write(tmp_path, {"expectations": [{"script": "s.json"}]}))
    with pytest.raises(MockError, match=r"nowhere.json: cannot read the script"):
        load_expectations(write(tmp_path, {"expectations": [{"script": "nowhere.json"}]}))
