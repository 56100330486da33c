"""`llmproxy chaos`: validate a file (one line per problem, --json to its schema), and set, patch, show and
clear the chaos of a running llmproxy through its control API."""

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from llmproxy.chain.stages.intercept import InterceptStage
from llmproxy.cli import main
from llmproxy.control.auth import Tokens
from llmproxy.control.server import ControlPlane, ControlServer
from llmproxy.intercept.engine import Intercept
from llmproxy.intercept.rules import ChaosFile, shorthand_rules
from tests.intercept.requests import Clock

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TOKEN = "cli-test-token"


def schema(name: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((DOCS / "json" / f"{name}.schema.json").read_text())
    return loaded


def test_validate_a_good_and_a_bad_file(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {
                "seed": 7,
                "budgetUsd": "2.00",
                "rules": [{"match": {"provider": "anthropic"}, "chaos": {"errorStatus": 529, "errorProbability": 0.3}}],
            }
        )
    )
    result = CliRunner().invoke(main, ["chaos", "validate", str(good)])
    assert result.exit_code == 0
    assert result.stdout == f"{good}: valid, 1 rule, a $2.00 budget\n"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rules": [{"chaos": {"tokenQuotaLimit": 100}}]}))
    result = CliRunner().invoke(main, ["chaos", "validate", "--json", str(bad)])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, schema("chaos-validate"))
    assert document["valid"] is False
    assert document["errors"] == [
        f"{bad}: $.rules[0].chaos: a token quota needs a token limit and tokenQuotaWindowMillis"
    ]


def test_the_published_schema_and_the_model_accept_every_documented_example() -> None:
    examples = re.findall(r"```json\n(.*?)```", (DOCS / "chaos.md").read_text(), re.DOTALL)
    assert examples
    schema = json.loads((DOCS / "chaos.schema.json").read_text())
    for example in map(json.loads, examples):
        jsonschema.validate(example, schema)
        ChaosFile.model_validate(example)


@pytest.fixture
def running() -> Iterator[ControlServer]:
    intercept = Intercept(ChaosFile(seed=3, rules=shorthand_rules(rpm=50)), clock=Clock())
    server = ControlServer(ControlPlane(intercept), Tokens(TOKEN))
    yield server
    server.close()


def chaos(server: ControlServer, *args: str, token: str = TOKEN) -> tuple[int, str, str]:
    env = {"LLMPROXY_CONTROL_URL": server.url, "LLMPROXY_CONTROL_TOKEN": token}
    result = CliRunner().invoke(main, ["chaos", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def test_set_patch_show_and_clear_a_running_proxy(running: ControlServer) -> None:
    assert chaos(running, "set", "api.openai.com", "--fail", "503@0.5", "--ttl", "30s") == (
        0,
        "",
        "api.openai.com: chaos set for 30 s\n",
    )
    code, _, said = chaos(running, "patch", "api.openai.com", '{"errorProbability": 1.0}')
    assert code == 0
    assert said == 'api.openai.com: {"errorStatus": 503, "errorProbability": 1.0}\n'
    code, shown, _ = chaos(running, "show")
    assert code == 0
    assert shown.splitlines() == [
        "seed 3",
        'host api.openai.com (30 s left): {"errorStatus": 503, "errorProbability": 1.0}',
        '--rpm 50: {"quotaName": "cli", "quotaLimit": 50, "quotaWindowMillis": 60000}',
        "injected so far: none",
    ]
    code, document, _ = chaos(running, "show", "--json")
    jsonschema.validate(json.loads(document), schema("chaos-show"))
    assert chaos(running, "clear") == (0, "", "every host: chaos cleared\n")
    assert not running.intercept.hosts


def test_a_profile_as_json_and_its_errors(running: ControlServer) -> None:
    assert chaos(running, "set", "a.example:8080", "--profile", '{"latency": {"fixedMs": 100}}')[0] == 0
    assert "a.example:8080" in running.intercept.hosts.snapshot()
    code, _, said = chaos(running, "set", "a.example", "--profile", '{"quotaLimit": 3}')
    assert code == 1
    assert said.startswith("llmproxy chaos set: 400: $.chaos: a request quota needs")
    assert chaos(running, "set", "a.example")[0] == 2  # nothing to inject
    assert chaos(running, "clear", "nowhere.example")[0] == 1


def test_a_wrong_token_and_no_control_api_are_one_line_each(running: ControlServer) -> None:
    code, _, said = chaos(running, "show", token="nope")
    assert (code, said) == (
        1,
        "llmproxy chaos show: 401: the control API needs the run's bearer token, from loopback\n",
    )
    result = CliRunner().invoke(main, ["chaos", "show"], env={"LLMPROXY_CONTROL_URL": "", "LLMPROXY_CONTROL_TOKEN": ""})
    assert result.exit_code == 2
    assert "no control API" in result.stderr


def test_the_chain_counts_its_rules_in_words(tmp_path: Path) -> None:
    """`--explain-chain` (the plan) and the chain as built (`--debug`) say "1 rule", not "1 rules"."""
    cassette = str(DOCS.parent / "cassettes" / "quickstart.json")
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"rules": [{"chaos": {"errorStatus": 529}}, {"chaos": {"errorStatus": 503}}]}))
    for options, rules in ((["--fail", "529@1"], "1 rule"), (["--chaos", str(two)], "2 rules")):
        result = CliRunner().invoke(main, ["replay", "--cassette", cassette, *options, "--explain-chain"])
        assert result.exit_code == 0, result.output
        assert f"  intercept: {rules} (" in result.stdout
    one_stage = InterceptStage(Intercept(ChaosFile(rules=shorthand_rules(rpm=50))))
    two_stage = InterceptStage(Intercept(ChaosFile.model_validate_json(two.read_text())))
    assert one_stage.explain().startswith("chaos, quotas and budget: 1 rule;")
    assert two_stage.explain().startswith("chaos, quotas and budget: 2 rules;")


@pytest.mark.parametrize("mode", ["mock", "replay"])
def test_the_command_a_run_starts_reaches_the_control_api_not_the_proxy(mode: str, tmp_path: Path) -> None:
    """The documented use: the child of `llmproxy mock|replay -- …` sets chaos, makes a call, shows what was
    injected. Its HTTPS_PROXY points at the proxy, which must not answer the control API's requests instead."""
    llmproxy = shlex.join([sys.executable, "-m", "llmproxy"])
    script = "; ".join(
        [
            f"{llmproxy} chaos set api.anthropic.com --fail 529 --fail-first 1 --retry-after 0.1",
            shlex.join([sys.executable, str(ROOT / "scripts" / "quickstart.py")]),
            f"{llmproxy} chaos show",
        ]
    )
    if mode == "mock":
        answers = tmp_path / "expectations.json"
        answers.write_text(json.dumps({"expectations": [{"respond": {"text": "mocked"}}]}))
        source = ("--expectations", str(answers))
    else:
        source = ("--cassette", str(ROOT / "cassettes" / "quickstart.json"))
    run = subprocess.run(
        [sys.executable, "-m", "llmproxy", mode, *source, "--", "sh", "-c", script],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LLMPROXY_HOME": str(tmp_path / "llmproxy")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "api.anthropic.com: chaos set until cleared" in run.stderr
    answer, *shown = run.stdout.splitlines()
    assert answer == "mocked" if mode == "mock" else answer.startswith("It lets you record real LLM exchanges once")
    assert 'host api.anthropic.com: {"failRequestCount": 1, "errorStatus": 529, "retryAfter": "0.1"}' in shown
    assert shown[-1] == "injected so far: error 1"
    assert "the run recovered: 1 of 1 fault retried" in run.stderr


def test_a_patch_that_breaks_the_profile_is_one_line_naming_the_field(running: ControlServer) -> None:
    """What pydantic says, as a JSON path and a message: never its layout or its help URL."""
    assert chaos(running, "set", "api.openai.com", "--fail", "503")[0] == 0
    for patch, said in (
        ('{"errorStatus": "x"}', "$.chaos.errorStatus: Input should be a valid integer"),
        ('{"errorProbability": 7}', "$.chaos.errorProbability: Input should be less than or equal to 1"),
    ):
        code, _, error = chaos(running, "patch", "api.openai.com", patch)
        assert code == 1
        assert error.startswith(f"llmproxy chaos patch: 400: the patched profile is not valid: {said}"), error
        assert error.count("\n") == 1
        assert "pydantic" not in error
