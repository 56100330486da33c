"""`llmproxy mcp-tap`: a stdio MCP server recorded through the tap by the official `mcp` SDK's client and
replayed with the server gone gives the client the same answers — with a cassette of its own and inside
`llmproxy record|replay -- agent`, where the run's cassette holds it; a miss is a JSON-RPC error that explains
itself; a server that writes garbage or exits mid-call leaves the agent's session sane."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llmproxy.cassette.files import encode_cassette, read_exchanges, read_stored, write_atomic
from llmproxy.cassette.model import Exchange
from llmproxy.mcp.stdio_exchange import answered_as
from tests.mcp_tap.client import CLIENT, run_client
from tests.mock.mcp.worked import write_worked

HERE = Path(__file__).parent
FORMAT = (HERE.parents[1] / "docs" / "cassette-format.md").read_text()
DOCUMENTED = Exchange.model_validate_json(
    re.search(r"## Stdio MCP exchanges.*?```json\n(.*?)```", FORMAT, re.DOTALL).group(1)  # type: ignore[union-attr]
)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def environment(home: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LLMPROXY_HOME": str(home / "llmproxy")}


def llmproxy(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "llmproxy", *arguments]


def tap(home: Path, *arguments: str, lines: list[object]) -> subprocess.CompletedProcess[bytes]:
    data = b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines)
    return subprocess.run(
        llmproxy("mcp-tap", *arguments), input=data, capture_output=True, env=environment(home), timeout=60, check=False
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, object]]:
    """The docs' worked mock MCP server (llmproxy mcp-serve) recorded through the tap into a cassette of its
    own, by the SDK client calling each of its tools, resources and prompts."""
    home = tmp_path_factory.mktemp("tap")
    server = llmproxy("mcp-serve", str(write_worked(home)))
    cassette = home / "tools.json"
    seen = run_client(
        home, llmproxy("mcp-tap", "--name", "weather", "--cassette", str(cassette), "--mode", "record", "--", *server)
    )
    return home, cassette, seen


def test_a_recording_replays_with_the_server_gone(recorded: tuple[Path, Path, dict[str, object]]) -> None:
    home, cassette, seen = recorded
    exchanges = read_exchanges(cassette)
    assert {exchange.request.url for exchange in exchanges} == {"stdio://weather/"}
    methods = [exchange.operation or exchange.request.body.json_["method"] for exchange in exchanges]  # type: ignore[union-attr]
    assert "initialize" in methods
    assert "tools/call" in methods
    call = next(e for e in exchanges if e.request.body.json_["method"] == "tools/call")  # type: ignore[union-attr]
    assert call.response is not None
    assert DOCUMENTED.response is not None
    shape = (call.request.url, call.request.http_version, call.request.headers, call.response.headers)
    assert shape == (
        DOCUMENTED.request.url,
        DOCUMENTED.request.http_version,
        DOCUMENTED.request.headers,
        DOCUMENTED.response.headers,
    )  # as docs/cassette-format.md shows it
    refresh = [e for e in exchanges if "refresh" in str(e.request.body)]
    assert refresh[0].streaming  # a log message before its answer: each line an event
    gone = ["/nonexistent/mcp-server"]  # never started in replay
    again = run_client(
        home, llmproxy("mcp-tap", "--name", "weather", "--cassette", str(cassette), "--mode", "replay", "--", *gone)
    )
    assert again == seen


def test_a_miss_is_a_json_rpc_error_that_explains_itself(recorded: tuple[Path, Path, dict[str, object]]) -> None:
    home, cassette, _ = recorded
    recorded_initialize = next(
        exchange.request.body.json_  # type: ignore[union-attr]
        for exchange in read_exchanges(cassette)
        if exchange.request.body.json_["method"] == "initialize"  # type: ignore[union-attr]
    )
    unknown = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "get_forecast", "arguments": {"city": "Lima"}},
    }
    done = tap(
        home,
        "--name",
        "weather",
        "--cassette",
        str(cassette),
        "--mode",
        "replay",
        "--",
        "x",
        lines=[{**recorded_initialize, "id": 1}, b"not json", unknown],
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[0]["id"] == 1
    assert answers[0]["result"]["serverInfo"]["name"] == "weather"
    assert answers[1]["error"]["code"] == -32700
    assert answers[2]["id"] == 7
    assert answers[2]["error"]["code"] == -32001
    assert "$.params.arguments.city: recorded" in answers[2]["error"]["message"]
    assert "'Lima'" in answers[2]["error"]["message"]
    assert done.returncode == 1
    assert b"Traceback" not in done.stderr


def test_inside_a_run_the_runs_cassette_holds_the_servers_exchanges(tmp_path: Path) -> None:
    """The same agent (a script driving the SDK client through the tap), run under `llmproxy record` and
    then `llmproxy replay` with the server's file gone: the run's cassette holds the exchanges, and the agent
    sees the same answers."""
    expectations = write_worked(tmp_path)
    cassette = tmp_path / "run.json"
    out = tmp_path / "seen.json"
    agent = [
        sys.executable,
        str(CLIENT),
        str(out),
        *llmproxy("mcp-tap", "--name", "weather", "--", *llmproxy("mcp-serve", str(expectations))),
    ]
    env = environment(tmp_path)
    recording = subprocess.run(
        llmproxy("record", "--cassette", str(cassette), "--", *agent),
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert recording.returncode == 0, recording.stderr.decode()
    seen = json.loads(out.read_text())
    assert {exchange.request.url for exchange in read_exchanges(cassette)} == {"stdio://weather/"}
    expectations.unlink()
    out.unlink()
    replaying = subprocess.run(
        llmproxy("replay", "--cassette", str(cassette), "--", *agent),
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert replaying.returncode == 0, replaying.stderr.decode()
    assert json.loads(out.read_text()) == seen
    assert b"0 missed, 0 unused" in replaying.stderr


def test_garbage_and_a_server_that_exits_mid_call_leave_the_session_sane(tmp_path: Path) -> None:
    cassette = tmp_path / "broken.json"
    server = [sys.executable, str(HERE / "broken_server.py")]
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "t", "arguments": {}}}
    after = {"jsonrpc": "2.0", "id": 4, "method": "ping"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    done = tap(
        tmp_path, "--cassette", str(cassette), "--mode", "record", "--", *server, lines=[INITIALIZE, ping, call, after]
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]  # only JSON-RPC reached the agent
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4]
    assert answers[1]["result"] == {}
    assert answers[2]["error"]["code"] == answers[3]["error"]["code"] == -32000
    assert "exited (status 3) before answering" in answers[2]["error"]["message"]
    said = done.stderr.decode()
    assert "broken_server wrote a line that is not JSON-RPC, not passed on: 'debug: handling initialize'" in said
    assert "Traceback" not in said
    assert [exchange.request.body.json_["id"] for exchange in read_exchanges(cassette)] == [1, 2]  # type: ignore[union-attr]


def test_a_tap_outside_a_run_without_a_cassette_says_so(tmp_path: Path) -> None:
    done = tap(tmp_path, "--", "server", lines=[])
    assert done.returncode == 2
    assert done.stderr.decode().startswith("llmproxy mcp-tap: error: mcp-tap: not inside llmproxy record|replay")


def test_a_server_is_named_by_its_program_or_what_a_launcher_runs() -> None:
    from llmproxy.mcp.stdio_exchange import server_name

    assert server_name(["npx", "@modelcontextprotocol/server-everything"]) == "server-everything"  # docs/mcp.md
    assert server_name(["npx", "-y", "@scope/weather-mcp@1.2"]) == "weather-mcp"
    assert server_name(["/usr/local/bin/mcp-weather", "--port", "1"]) == "mcp-weather"
    assert server_name(["uvx", "mcp-server-fetch"]) == "mcp-server-fetch"
    assert server_name(["node", "dist/index.js"]) == "index"


def test_inside_a_mock_run_the_tap_passes_through(recorded: tuple[Path, Path, dict[str, object]]) -> None:
    """Under `llmproxy mock` the model is scripted, yet the agent's tools still work: the same answers as
    recorded, and nothing recorded."""
    home, _, seen = recorded
    out = home / "mocked.json"
    server = llmproxy("mcp-serve", str(write_worked(home)))
    agent = [sys.executable, str(CLIENT), str(out), *llmproxy("mcp-tap", "--name", "weather", "--", *server)]
    done = subprocess.run(
        llmproxy("mock", "--", *agent), env=environment(home), capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(out.read_text()) == seen
    assert b"weather: the run mocks: passing through, nothing recorded" in done.stderr


@pytest.mark.slow
def test_inside_a_new_episodes_replay_the_tap_records_what_the_cassette_lacks(tmp_path: Path) -> None:
    """`llmproxy replay --record-mode new_episodes`: the tap answers what the run's cassette holds and starts the
    server for what it lacks (told the client's initialize first), whose answers reach the agent and are
    recorded into the run's cassette; nothing is a miss, and the agent sees what a recording run saw."""
    expectations = write_worked(tmp_path)
    cassette = tmp_path / "run.json"
    out = tmp_path / "seen.json"
    tapped = llmproxy("mcp-tap", "--name", "weather", "--", *llmproxy("mcp-serve", str(expectations)))
    agent = [sys.executable, str(CLIENT), str(out), *tapped]
    env = environment(tmp_path)
    recording = subprocess.run(
        llmproxy("record", "--cassette", str(cassette), "--", *agent), env=env, capture_output=True, timeout=120
    )
    assert recording.returncode == 0, recording.stderr.decode()
    seen = json.loads(out.read_text())

    def refreshes(exchange: dict[str, Any]) -> bool:
        return '"refresh"' in json.dumps(exchange["request"])

    stored = read_stored(cassette)
    kept = [exchange for exchange in stored if not refreshes(exchange)]
    assert len(stored) - len(kept) == 2  # the two calls of the tool `refresh`
    write_atomic(cassette, encode_cassette(kept))
    out.unlink()
    replaying = subprocess.run(
        llmproxy("replay", "--cassette", str(cassette), "--record-mode", "new_episodes", "--", *agent),
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert replaying.returncode == 0, replaying.stderr.decode()
    assert json.loads(out.read_text()) == seen
    assert b"0 missed" in replaying.stderr
    assert b"handed 2 new exchanges" in replaying.stderr
    assert sum(refreshes(exchange) for exchange in read_stored(cassette)) == 2


@pytest.mark.slow
@pytest.mark.parametrize(("version", "batched"), [("2025-03-26", True), ("2025-06-18", False)])
def test_a_batch_is_answered_as_the_agreed_version_says_recorded_and_replayed(
    tmp_path: Path, version: str, batched: bool
) -> None:
    """A batch of two requests: under 2025-03-26 an array of both answers, recorded as two exchanges and
    replayed under the ids the client gives then; under 2025-06-18 one JSON-RPC error, recording and replaying."""
    server = llmproxy("mcp-serve", str(write_worked(tmp_path)))
    cassette = tmp_path / "tools.json"
    hello = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": version}}  # type: ignore[dict-item]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}

    def batch(first: int) -> list[object]:
        calls = [("ping", {}), ("tools/call", {"name": "get_forecast", "arguments": {"city": "Paris"}})]
        return [{"jsonrpc": "2.0", "id": first + n, "method": m, "params": p} for n, (m, p) in enumerate(calls)]

    def answers(done: subprocess.CompletedProcess[bytes]) -> object:
        assert done.returncode == 0, done.stderr.decode()
        return json.loads(done.stdout.splitlines()[-1])

    record = ("--name", "weather", "--cassette", str(cassette), "--mode", "record", "--", *server)
    recorded = answers(tap(tmp_path, *record, lines=[hello, initialized, batch(2)]))
    replay = ("--name", "weather", "--cassette", str(cassette), "--mode", "replay", "--", "/nonexistent")
    replayed = answers(tap(tmp_path, *replay, lines=[hello, initialized, batch(22)]))
    if not batched:
        assert recorded == replayed
        assert recorded["error"]["code"] == -32600  # type: ignore[index]
        assert f"not part of MCP {version}" in recorded["error"]["message"]  # type: ignore[index]
        return
    assert [answer["id"] for answer in recorded] == [2, 3]  # type: ignore[attr-defined]
    assert [answer["id"] for answer in replayed] == [22, 23]  # type: ignore[attr-defined]
    assert [answer["result"] for answer in replayed] == [answer["result"] for answer in recorded]  # type: ignore[attr-defined]
    assert recorded[1]["result"]["structuredContent"]["city"] == "Paris"  # type: ignore[index]
    assert len(read_exchanges(cassette)) == 3  # initialize, then each request of the batch


def test_a_replayed_answer_and_its_progress_notifications_follow_the_request_as_sent_now() -> None:
    """What the server wrote for the recorded call (a log line, two progress notifications, the answer), written
    to the call as the client sends it now: the answer under its id, the progress under its token."""
    written = [
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "refreshing"}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "then", "progress": 1}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "then", "progress": 3}},
        {"jsonrpc": "2.0", "id": 4, "result": {"content": []}},
    ]
    now = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "refresh", "_meta": {"progressToken": "now"}},
    }
    lines = [json.loads(line) for line in answered_as(written, now)]
    assert lines[0] == written[0]
    assert [line["params"] for line in lines[1:3]] == [
        {"progressToken": "now", "progress": 1},
        {"progressToken": "now", "progress": 3},
    ]
    assert lines[3] == {"jsonrpc": "2.0", "id": 9, "result": {"content": []}}
    without = {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "refresh"}}
    assert [json.loads(line) for line in answered_as(written, without)][:3] == written[:3]
