"""The contract every command keeps, as the documentation states it: each command, in each of its formats (the
text it prints by default, every `--format`, `--json`), on a passing, a failing and an unusable input.

* The exit status is the one the README's table gives the command for that case — the test reads the table,
  so a status the table does not document for the command fails it.
* In JSON, stdout is one document that validates against the schema docs/json-output.md links for the
  command, and says its `schemaVersion` and `command`; it is empty only when the command stopped before it
  had a result (docs/json-output.md says when).
* No format ever prints a traceback, and a failure says something on stderr.

Commands that run a proxy or probe clients (`record`, `replay`, `mock`, `doctor`) run as processes; the rest
in-process, through click's runner.
"""

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import click
import jsonschema
import orjson
import pytest
from click.testing import CliRunner

from llmproxy.cli import main
from tests.cassette.factory import ANTHROPIC_KEY
from tests.cli_commands import commands
from tests.replay.test_cli_output import OTHER

# End to end through child processes (llmproxy's command line, a pytest session): CI runs these once.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
SERVED = (
    "record",
    "replay",
    "mock",
    "doctor",
    "mcp",
    "mcp-serve",
    "mcp-tap",
    "ui",
)  # run as processes: a proxy, or clients probed for real
SITUATIONS = ("passing", "failing", "unusable")


def exit_statuses() -> dict[str, dict[str, str]]:
    """The README's table: for each command, each status row's cell (a prefix such as `verify` covers its
    gates)."""
    text = (ROOT / "README.md").read_text()
    table = text[text.index("## Exit statuses") :].split("\n\n")[2].splitlines()
    columns = [re.findall(r"`([a-z -]+)`", cell) for cell in table[0].split("|")[2:-1]]
    cells: dict[str, dict[str, str]] = {}
    for row in table[2:]:
        status, *values = [cell.strip() for cell in row.split("|")[1:-1]]
        for names, value in zip(columns, values, strict=True):
            for name in names:
                cells.setdefault(name, {})[status] = value
    return cells


def documented_schemas() -> tuple[dict[str, Path], set[str]]:
    """docs/json-output.md: each command's schema, and the commands it says print no JSON."""
    text = (ROOT / "docs" / "json-output.md").read_text()
    schemas = {}
    for row in text.splitlines():
        found = re.match(r"\| (`llmproxy .*?) \| \[`[^`]+`\]\((json/[^)]+)\)", row)
        if found:
            for command in re.findall(r"`llmproxy ([a-z -]+)`", found.group(1)):
                schemas[command] = ROOT / "docs" / found.group(2)
    without = text[text.index("Commands without `--json`") :].split("\n\n")[0]
    return schemas, {name for name in re.findall(r"`([a-z -]+)`", without) if name != "--json"}


STATUSES = exit_statuses()
SCHEMAS, WITHOUT_JSON = documented_schemas()


def formats(command: click.Command) -> list[str]:
    """What a user may choose: the default text, each --format, --json."""
    options = {name: parameter for parameter in command.params for name in getattr(parameter, "opts", [])}
    chosen = ["text"]
    if "--format" in options:
        chosen += [f"--format={choice}" for choice in options["--format"].type.choices]  # type: ignore[attr-defined]
    if "--json" in options:
        chosen.append("--json")
    return chosen


@dataclass(frozen=True)
class Case:
    arguments: tuple[str, ...]  # after the command's words; {name} is an input file
    status: int
    environment: dict[str, str] = field(default_factory=dict)


# Each command on a passing, a failing and an unusable input (none where the command has no such case).
CASES: dict[str, dict[str, Case]] = {
    "addon-path": {"passing": Case((), 0), "unusable": Case(("extra",), 2)},
    "ca": {
        "passing": Case((), 0),
        "failing": Case((), 1, {"LLMPROXY_HOME": "{a_file}"}),  # the CA cannot be made there
        "unusable": Case(("--system",), 2),
    },
    "cassette check": {
        "passing": Case(("{good}",), 0),
        "failing": Case(("{leaked}",), 1),
        "unusable": Case(("{corrupt}",), 2),
    },
    "cassette to-expectations": {"passing": Case(("{good}",), 0), "unusable": Case(("{corrupt}",), 2)},
    "cassette compact": {"passing": Case(("{good}",), 0), "unusable": Case(("{corrupt}",), 2)},
    "cassette import": {
        "passing": Case(("{vcrpy}", "-o", "{imported}"), 0),
        "unusable": Case(("{corrupt_vcrpy}", "-o", "{imported}"), 2),
    },
    "cassette export": {
        "passing": Case(("{good}", "-o", "{exported}"), 0),
        "unusable": Case(("{corrupt}", "-o", "{exported}"), 2),
    },
    "chaos validate": {
        "passing": Case(("{chaos}",), 0),
        "failing": Case(("{bad_chaos}",), 1),
        "unusable": Case(("{missing}",), 1),
    },
    "chaos show": {
        "passing": Case(("--url", "{control}", "--token", "{token}"), 0),
        "failing": Case(("--url", "{control}", "--token", "wrong"), 1),
        "unusable": Case((), 2),
    },
    "chaos set": {
        "passing": Case(("api.anthropic.com", "--fail", "529@0.5", "--url", "{control}", "--token", "{token}"), 0),
        "failing": Case(("api.anthropic.com", "--fail", "529", "--url", "{control}", "--token", "wrong"), 1),
        "unusable": Case(("api.anthropic.com", "--fail", "529"), 2),
    },
    "chaos patch": {
        "passing": Case(
            ("patched.example", '{{"errorProbability": 0.1}}', "--url", "{control}", "--token", "{token}"), 0
        ),
        "failing": Case(("api.anthropic.com", '{{"errorStatus": "x"}}', "--url", "{control}", "--token", "{token}"), 1),
        "unusable": Case(("api.anthropic.com", "{{}}"), 2),
    },
    "chaos clear": {
        "passing": Case(("cleared.example", "--url", "{control}", "--token", "{token}"), 0),
        "failing": Case(("--url", "{control}", "--token", "wrong"), 1),
        "unusable": Case((), 2),
    },
    "doctor": {
        "passing": Case(("--", PYTHON, "-c", "pass"), 0),
        "failing": Case(("--", PYTHON, "-c", "pass"), 1, {"NO_PROXY": "localhost,.openai.com"}),
        "unusable": Case(("--", "llmproxy-no-such-command"), 127),
    },
    "explain": {
        "passing": Case(("{good}",), 0),
        "failing": Case(("{empty}",), 1),  # no chat call to explain
        "unusable": Case(("{corrupt}",), 2),
    },
    # no collector in this contract: the passing case is tests/telemetry/test_export.py's
    "export otlp": {
        "failing": Case(("{good}", "--otlp", "http://127.0.0.1:9"), 1, {"OTEL_EXPORTER_OTLP_TIMEOUT": "1"}),
        "unusable": Case(("{corrupt}", "--otlp", "http://127.0.0.1:9"), 2),
    },
    "mock": {
        "passing": Case(("--expectations", "{expectations}", "--", PYTHON, "{client}"), 0),
        "failing": Case(("--expectations", "{unmatched}", "--", PYTHON, "{client}"), 1),
        "unusable": Case(("--expectations", "{invalid_expectations}", "--", PYTHON, "{client}"), 1),
    },
    "mcp": {  # stdin is empty: the server ends at once
        "passing": Case(("--mock", "{expectations}"), 0),
        "failing": Case(("--mock", "{invalid_expectations}"), 1),
        "unusable": Case(("--attach",), 2),
    },
    "mcp-serve": {  # stdin is empty: the server ends at once
        "passing": Case(("{mcp_servers}",), 0),
        "failing": Case(("{invalid_expectations}",), 1),
        "unusable": Case(("{mcp_servers}", "--server", "no-such-server"), 2),
    },
    "mcp-check": {
        "passing": Case(("--", PYTHON, "-m", "llmproxy", "mcp-serve", "{mcp_servers}"), 0),
        "failing": Case(("--", PYTHON, "-c", "pass"), 1),  # a server that exits at once
        "unusable": Case((), 2),
    },
    "mcp-tap": {  # stdin is empty: the server it runs ends at once
        "passing": Case(("--cassette", "{fresh}", "--mode", "record", "--", PYTHON, "-c", "pass"), 0),
        "failing": Case(("--cassette", "{fresh}", "--mode", "record", "--", PYTHON, "-c", "raise SystemExit(3)"), 1),
        "unusable": Case(("--", PYTHON, "-c", "pass"), 2),
    },
    "mock validate": {
        "passing": Case(("{expectations}",), 0),
        "failing": Case(("{invalid_expectations}",), 1),
        "unusable": Case(("{missing}",), 1),
    },
    "record": {
        "passing": Case(("--cassette", "{fresh}", "--", PYTHON, "-c", "pass"), 0),
        "failing": Case(("--cassette", "{fresh}", "--", PYTHON, "-c", "raise SystemExit(3)"), 3),
        "unusable": Case(("--cassette", "{corrupt}", "--", PYTHON, "-c", "pass"), 1),
    },
    "replay": {
        "passing": Case(("--cassette", "{good}", "--timing", "instant", "--", PYTHON, "{quickstart}"), 0),
        "failing": Case(("--cassette", "{good}", "--", PYTHON, "{client}"), 1),  # a miss
        "unusable": Case(("--cassette", "{corrupt}", "--", PYTHON, "{quickstart}"), 1),
    },
    "report": {"passing": Case(("{good}",), 0), "unusable": Case(("{corrupt}",), 2)},
    # serves until stopped (130 or 143, as a run without a command): only what stops it at once is a case
    "ui": {"failing": Case(("{missing}",), 1), "unusable": Case(("{corrupt}",), 1)},
    "verify cost": {
        "passing": Case(("{good}", "--max-usd", "1"), 0),
        "failing": Case(("{good}", "--max-usd", "0.00001"), 1),
        "unusable": Case(("{corrupt}", "--max-usd", "1"), 2),
    },
    "verify tool-call": {
        "passing": Case(("{tool_loop}", "--name", "Bash"), 0),
        "failing": Case(("{tool_loop}", "--name", "Write"), 1),
        "unusable": Case(("{corrupt}", "--name", "Bash"), 2),
    },
    "verify structured-output": {
        "passing": Case(("{structured}", "--schema", "{schema}"), 0),
        "failing": Case(("{unstructured}", "--schema", "{schema}"), 1),
        "unusable": Case(("{structured}", "--schema", "{missing}"), 2),
    },
    "verify resilience": {
        "passing": Case(("{recovered}",), 0),
        "failing": Case(("{gave_up}",), 1),
        "unusable": Case(("{good}",), 2),  # no fault was injected: nothing to judge
    },
    "verify report": {
        "passing": Case(("{good}", "--baseline", "{baseline}", "--max-grade-drop", "0"), 0),
        "failing": Case(("{good}", "--baseline", "{baseline}", "--min-cache-hit", "0.9"), 1),
        "unusable": Case(("{good}", "--baseline", "{corrupt}"), 2),
    },
    "verify drift": {
        "passing": Case(("{same}", "--live"), 0),
        "failing": Case(("{drifted}", "--live"), 1),
        "unusable": Case(("{corrupt}", "--live"), 2),
    },
}

# the commands that, given an input they cannot use, still print their document; and those that stop before
# a result on a failing input: a running llmproxy that refuses to say what it injects (docs/json-output.md)
DOCUMENT_WHEN_UNUSABLE = {"cassette check", "mock validate", "chaos validate"} | {c for c in CASES if "verify" in c}
NO_DOCUMENT_WHEN_FAILING = {"chaos show"}

RUNS = [
    pytest.param(" ".join(words), fmt, situation, id=f"{' '.join(words)}-{fmt.removeprefix('--')}-{situation}")
    for words, command in commands()
    for fmt in formats(command)
    for situation in SITUATIONS
    if situation in CASES.get(" ".join(words), {})
]


@pytest.mark.parametrize(("command", "fmt", "situation"), RUNS)
def test_every_command_in_every_format_keeps_the_contract(
    command: str, fmt: str, situation: str, inputs: dict[str, str]
) -> None:
    case = CASES[command][situation]
    arguments = [*command.split(), *([] if fmt == "text" else [fmt]), *(a.format(**inputs) for a in case.arguments)]
    environment = {name: value.format(**inputs) for name, value in case.environment.items()}
    status, stdout, stderr = run(arguments, environment, inputs, served=command.split()[0] in SERVED)

    assert status == case.status, f"{arguments}: {stderr}"
    column = STATUSES[command] if command in STATUSES else STATUSES[command.split()[0]]
    row = {126: "126 / 127", 127: "126 / 127"}.get(status, str(status) if status in (0, 1, 2) else "*N*")
    assert column.get(row, "—") not in ("", "—"), f"the README's table says nothing of {status} for {command}"
    assert "Traceback" not in stdout + stderr
    if status != 0:
        assert (stdout + stderr).strip(), f"{arguments} failed without a word"

    if fmt in ("--json", "--format=json"):
        if situation == "passing" or (situation, command) in (
            *(("unusable", name) for name in DOCUMENT_WHEN_UNUSABLE),
            *(("failing", name) for name in CASES if name not in NO_DOCUMENT_WHEN_FAILING),
        ):
            document = json.loads(stdout)  # one document, and nothing else
            schema = json.loads(SCHEMAS[command].read_text())
            jsonschema.validate(document, schema)
            assert document["schemaVersion"] == schema["properties"]["schemaVersion"]["const"]
            assert document["command"] == command
        else:
            assert stdout == "", f"{arguments}: stopped before a result, yet printed {stdout[:200]!r}"


def test_the_contract_covers_every_command() -> None:
    """Every command is in the README's table and in the cases above; it takes --json exactly when
    docs/json-output.md gives it a schema, and otherwise is one it names as printing no JSON."""
    for words, command in commands():
        name = " ".join(words)
        assert name in CASES, f"{name} has no case in this contract"
        assert name in STATUSES or words[0] in STATUSES, f"the README's table has no column for {name}"
        if "--json" in formats(command):
            assert SCHEMAS.get(name, Path("missing")).exists(), f"docs/json-output.md links no schema for {name}"
        else:
            assert name in WITHOUT_JSON, f"{name} takes no --json and docs/json-output.md does not say why"


def run(
    arguments: list[str], environment: dict[str, str], inputs: dict[str, str], served: bool
) -> tuple[int, str, str]:
    home = {"HOME": inputs["home"], "LLMPROXY_HOME": inputs["llmproxy_home"]}
    if served:
        done = subprocess.run(
            [PYTHON, "-m", "llmproxy", *arguments],
            env={"PATH": os.environ["PATH"], **home, **environment},
            cwd=inputs["home"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        return done.returncode, done.stdout, done.stderr
    cleared = dict.fromkeys(("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "LLMPROXY_CONTROL_URL"))
    result = CliRunner().invoke(main, arguments, env={**cleared, **home, **environment})  # type: ignore[dict-item]
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


class _Upstream(BaseHTTPRequestHandler):
    """A provider whose answers keep their shape at /same and change it at /drifted."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        answer = dict(self.server.answer)  # type: ignore[attr-defined]
        if self.path.startswith("/drifted"):
            answer["service_tier"] = "standard"
        body = orjson.dumps(answer)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Every input the cases name, made once; a provider stand-in for drift and a running llmproxy (its
    control API) for chaos."""
    folder = tmp_path_factory.mktemp("contract")
    files: dict[str, Any] = {}

    def write(name: str, content: bytes | str | Any) -> None:
        path = folder / name
        data = content if isinstance(content, bytes | str) else orjson.dumps(content)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        files[name.split(".")[0]] = str(path)

    quickstart = (ROOT / "cassettes" / "quickstart.json").read_bytes()
    write("good.json", quickstart)
    leaked = orjson.loads(quickstart)
    leaked["exchanges"][0]["request"]["body"]["json"]["messages"][0]["content"] = f"my key {ANTHROPIC_KEY}"
    write("leaked.json", leaked)
    write("corrupt.json", quickstart[:300])
    write("empty.json", {"llmproxy_cassette": 1, "exchanges": []})
    vcrpy = (
        'interactions:\n- request:\n    body: \'{"model": "gpt-5-mini", "messages": []}\'\n    headers: {}\n'
        "    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n  response:\n"
        "    body: {string: '{\"choices\": []}'}\n    headers: {content-type: [application/json]}\n"
        "    status: {code: 200, message: OK}\nversion: 1\n"
    )
    write("vcrpy.yaml", vcrpy)
    write("corrupt_vcrpy.yaml", vcrpy[:150] + "\n  - {unclosed: [\n")
    files["imported"] = str(folder / "imported" / "imported.json")
    files["exported"] = str(folder / "exported.har")
    write("a_file.txt", "not a folder")
    files["missing"] = str(folder / "missing.json")
    files["fresh"] = str(folder / "fresh" / "new.json")
    write("chaos.json", {"rules": [{"chaos": {"errorStatus": 529, "errorProbability": 0.5}}]})
    write("bad_chaos.json", {"rules": [{"chaos": {"errorStatus": "x"}}]})
    write("expectations.json", {"expectations": [{"respond": {"text": "Recorded traffic, replayed."}}]})
    write("unmatched.json", {"expectations": [{"match": {"model": "no-such-model"}, "respond": {"text": "no"}}]})
    write("invalid_expectations.json", {})
    write(
        "mcp_servers.json", {"mcpServers": [{"name": "echo", "tools": [{"name": "say", "results": [{"text": "hi"}]}]}]}
    )
    write("client.py", OTHER)
    files["quickstart"] = str(ROOT / "scripts" / "quickstart.py")
    files["tool_loop"] = str(ROOT / "cassettes" / "claude-code-tool-loop.json")
    files["recovered"] = str(ROOT / "cassettes" / "chaos" / "recovered.json")
    files["gave_up"] = str(ROOT / "cassettes" / "chaos" / "gave-up.json")
    write("schema.json", {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}})
    clean = orjson.loads((ROOT / "cassettes" / "report" / "clean.json").read_bytes())
    clean["exchanges"] = clean["exchanges"][:1]
    for name, text in (("structured.json", '{"city": "Paris"}'), ("unstructured.json", '{"city": 7}')):
        clean["exchanges"][0]["response"]["body"]["json"]["content"] = [{"type": "text", "text": text}]
        write(name, clean)
    baseline = CliRunner().invoke(main, ["report", files["good"], "--json"])
    write("baseline.json", baseline.stdout)
    files["home"], files["llmproxy_home"] = str(folder), str(folder / "llmproxy")

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    upstream.answer = clean["exchanges"][0]["response"]["body"]["json"]  # type: ignore[attr-defined]
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    for name in ("same", "drifted"):
        clean["exchanges"][0]["request"]["url"] = f"http://127.0.0.1:{upstream.server_address[1]}/{name}/v1/messages"
        write(f"{name}.json", clean)

    running = subprocess.Popen(
        [PYTHON, "-m", "llmproxy", "mock", "--expectations", files["expectations"]],
        env={"PATH": os.environ["PATH"], "HOME": str(folder), "LLMPROXY_HOME": files["llmproxy_home"]},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert running.stdout is not None
    exported: dict[str, str] = {}
    for line in running.stdout:
        if line.startswith("export "):
            name, _, value = line.removeprefix("export ").strip().partition("=")
            exported[name] = value.strip("'\"")
        if "LLMPROXY_CONTROL_TOKEN" in exported and "LLMPROXY_CONTROL_URL" in exported:
            break
    files["control"], files["token"] = exported["LLMPROXY_CONTROL_URL"], exported["LLMPROXY_CONTROL_TOKEN"]
    for host in ("patched.example", "cleared.example"):  # what `chaos patch` and `chaos clear` change
        control = ["--url", files["control"], "--token", files["token"]]
        assert CliRunner().invoke(main, ["chaos", "set", host, "--fail", "529", *control]).exit_code == 0
    try:
        yield files
    finally:
        running.terminate()
        running.wait(timeout=30)
        running.stdout.close()
        upstream.shutdown()
        upstream.server_close()
