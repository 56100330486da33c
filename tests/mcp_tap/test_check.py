"""`llmproxy mcp-check`: the protocol checks against llmproxy's own mock MCP server over Streamable HTTP (the
table docs/mcp.md shows, from its worked example) and over stdio, against a deliberately broken server, and
against the reference server from npm."""

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from llmproxy.mcp.check import CallTools, Checked, Checker, Outcome, sample
from llmproxy.mcp.connection import Opener
from tests.mcp_tap.test_everything import EVERYTHING, NODE
from tests.mcp_tap.test_tap import HERE, environment, llmproxy
from tests.mock.mcp.worked import PAGE, write_worked

ROOT = HERE.parents[1]
CHECK_SECTION = PAGE[PAGE.index("## Checking a server") :]
DOCUMENTED_TABLE = re.search(r"```text\n(.*?)```", CHECK_SECTION, re.DOTALL).group(1).splitlines()  # type: ignore[union-attr]
DOCUMENTED_COMMAND = re.search(r"^llmproxy mock .*$", CHECK_SECTION, re.MULTILINE).group(0)  # type: ignore[union-attr]


def outcomes(checked: list[Checked]) -> dict[str, Outcome]:
    return {check.name: check.outcome for check in checked}


def test_the_mock_over_http_passes_as_the_docs_show(tmp_path: Path) -> None:
    """docs/mcp.md's command, run: the mock serving the worked example, mcp-check run under it."""
    write_worked(tmp_path)
    inner = (
        DOCUMENTED_COMMAND.split("sh -c ", 1)[1].strip("'").replace("llmproxy mcp-check", "llmproxy mcp-check --json")
    )
    command = [*llmproxy("mock", "--expectations", "agent.json", "--"), "sh", "-c", inner]
    env = environment(tmp_path) | {"PATH": f"{Path(sys.executable).parent}:{environment(tmp_path)['PATH']}"}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()
    said = [line for line in done.stderr.decode().splitlines() if line[:4] in ("PASS", "FAIL", "SKIP")]
    assert said == DOCUMENTED_TABLE
    report = json.loads(done.stdout)
    jsonschema.validate(report, json.loads((ROOT / "docs" / "json" / "mcp-check.schema.json").read_text()))
    assert report["passed"]
    assert report["transport"] == "http"


def test_the_mock_over_stdio_passes_and_calls_every_tool_when_asked(tmp_path: Path) -> None:
    opener = Opener(command=llmproxy("mcp-serve", str(write_worked(tmp_path))))
    checked = outcomes(Checker(opener, CallTools.ALL).run())
    assert checked["session ids"] is Outcome.SKIP  # stdio: the process is the session
    assert checked["tools/call refresh"] is Outcome.PASS
    assert Outcome.FAIL not in checked.values()


def test_a_broken_server_fails_what_it_breaks(tmp_path: Path) -> None:
    """It prints garbage before each answer, answers every method (an unknown one too) with an empty result,
    dies on a line that is not JSON, and exits in the middle of a tool call."""
    done = subprocess.run(
        llmproxy("mcp-check", "--json", "--", sys.executable, str(HERE / "broken_server.py")),
        env=environment(tmp_path),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    report = {check["name"]: check for check in json.loads(done.stdout)["checks"]}
    assert report["initialize"]["outcome"] == "pass"
    assert report["ping"]["outcome"] == "fail"
    assert "not JSON-RPC: 'debug: handling" in report["ping"]["detail"]
    assert report["unknown method → -32601"]["outcome"] == "fail"
    assert report["not JSON → -32700"]["outcome"] == "fail"
    assert b"Traceback" not in done.stderr


@pytest.mark.e2e
@pytest.mark.skipif(not (EVERYTHING.exists() and NODE.exists()), reason="npm packages not installed")
def test_the_reference_server_passes_but_for_its_silence_on_garbage() -> None:
    checked = outcomes(Checker(Opener(command=[str(NODE), str(EVERYTHING), "stdio"]), CallTools.NONE).run())
    assert [name for name, outcome in checked.items() if outcome is Outcome.FAIL] == ["not JSON → -32700"]
    assert checked["tools/list"] is Outcome.PASS
    assert checked["resources/list"] is checked["prompts/list"] is Outcome.PASS


def test_sample_arguments_meet_their_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "minimum": 3},
            "units": {"enum": ["metric", "imperial"]},
            "when": {"type": "object", "properties": {"hour": {"type": ["null", "number"]}}, "required": ["hour"]},
            "optional": {"type": "string"},
        },
        "required": ["city", "days", "units", "when"],
    }
    arguments = sample(schema)
    jsonschema.validate(arguments, schema)
    assert arguments == {"city": "example", "days": 3, "units": "metric", "when": {"hour": 1}}
