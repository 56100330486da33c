"""HTTP MCP servers and A2A agents are recorded by the shape of their traffic, with no `--record-host`: the
official `mcp` and `a2a-sdk` clients talk through the recording proxy to llmproxy's mock servers (standing in
for real ones on 127.0.0.1), then through the replaying proxy with those servers gone, and get the same results.
A request the recording does not hold gets a JSON-RPC error that says why."""

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from llmproxy.cassette.files import read_exchanges
from llmproxy.cassette.tool_servers import protocol_of
from llmproxy.session import Listening, mocking, recording, replaying
from tests.mock.a2a.worked import WORKED as A2A_WORKED
from tests.mock.mcp.worked import WORKED as MCP_WORKED
from tests.mock.test_servers_from_recording import a2a_session, mcp_session


def run[T](use: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(use())


async def _talk(proxy_url: str, base_url: str) -> tuple[list[Any], list[Any]]:
    async with (
        httpx2.AsyncClient(proxy=proxy_url, trust_env=False) as mcp_http,
        Client(streamable_http_client(f"{base_url}/mcp/weather", http_client=mcp_http)) as client,
        httpx.AsyncClient(proxy=proxy_url, trust_env=False) as a2a_http,
    ):
        return await mcp_session(client), await a2a_session(f"{base_url}/a2a/translator", a2a_http)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, tuple[list[Any], list[Any]]]:
    """One recorded run of both clients against the mock servers, with no host named: the cassette, the
    servers' base URL, and what the clients got."""
    tmp_path = tmp_path_factory.mktemp("by-shape")
    originals = tmp_path / "originals.json"
    originals.write_text(json.dumps({"mcpServers": MCP_WORKED["mcpServers"], "a2aAgents": A2A_WORKED["a2aAgents"]}))
    cassette = tmp_path / "run.json"
    listening = Listening(ca_directory=tmp_path / "ca")
    with mocking(originals, listening) as real, recording(cassette, listening) as proxy:
        got = run(lambda: _talk(proxy.url, real.base_url))
        base_url = real.base_url
    return cassette, base_url, got


def test_mcp_and_a2a_traffic_is_recorded_by_its_shape_as_its_own_kind(
    recorded: tuple[Path, str, tuple[list[Any], list[Any]]],
) -> None:
    cassette, _, _ = recorded
    kinds = [protocol_of(exchange) for exchange in read_exchanges(cassette)]
    assert kinds.count("mcp") >= 12  # initialize, notifications, the stream's GET, the calls, the DELETE
    assert kinds.count("a2a") >= 6  # the agent cards and the messages
    assert None not in kinds  # nothing else went through


def test_the_sdk_clients_get_the_same_answers_replayed_with_the_servers_gone(
    recorded: tuple[Path, str, tuple[list[Any], list[Any]]], tmp_path: Path
) -> None:
    cassette, base_url, (recorded_mcp, recorded_a2a) = recorded
    with replaying(cassette, listening=Listening(ca_directory=tmp_path / "ca")) as proxy:
        replayed_mcp, replayed_a2a = run(lambda: _talk(proxy.url, base_url))
        assert not proxy.misses
        assert not proxy.unused, [e.request.url for e in proxy.unused]
    assert replayed_mcp == recorded_mcp
    assert replayed_a2a == recorded_a2a


def test_a_tool_call_the_recording_does_not_hold_gets_a_json_rpc_error_saying_why(
    recorded: tuple[Path, str, tuple[list[Any], list[Any]]], tmp_path: Path
) -> None:
    cassette, base_url, _ = recorded

    async def call_madrid(proxy_url: str) -> str:
        async with (
            httpx2.AsyncClient(proxy=proxy_url, trust_env=False) as http,
            Client(streamable_http_client(f"{base_url}/mcp/weather", http_client=http)) as client,
        ):
            with pytest.raises(MCPError) as raised:
                await client.call_tool("get_forecast", {"city": "Madrid"})
            return raised.value.error.message

    with replaying(cassette, listening=Listening(ca_directory=tmp_path / "ca")) as proxy:
        message = run(lambda: call_madrid(proxy.url))
    assert message.startswith("llmproxy: POST ")
    assert "no recorded exchange matches" in message
    assert "$.params.arguments.city" in message
    assert "Madrid" in message


def test_each_mcp_session_is_replayed_its_own_answers_whatever_order_the_sessions_ask_in(tmp_path: Path) -> None:
    """Two sessions ask the same tool the same thing and were answered differently (the server's sequence went
    on): replayed, each session gets what it got, even when the second asks first."""
    originals = tmp_path / "originals.json"
    originals.write_text(json.dumps({"mcpServers": MCP_WORKED["mcpServers"]}))
    cassette = tmp_path / "run.json"
    listening = Listening(ca_directory=tmp_path / "ca")

    async def two_sessions(proxy_url: str, base_url: str, second_first: bool) -> dict[str, Any]:
        async with (
            httpx2.AsyncClient(proxy=proxy_url, trust_env=False) as http,
            Client(streamable_http_client(f"{base_url}/mcp/weather", http_client=http)) as first,
            Client(streamable_http_client(f"{base_url}/mcp/weather", http_client=http)) as second,
        ):
            got: dict[str, Any] = {}
            order = [("second", second), ("first", first)] if second_first else [("first", first), ("second", second)]
            for name, client in order:
                try:
                    got[name] = (await client.call_tool("get_forecast", {"city": "Rome"})).model_dump()
                except MCPError as error:
                    got[name] = (error.code, error.error.message)
            return got

    with mocking(originals, listening) as real, recording(cassette, listening) as proxy:
        base_url = real.base_url
        recorded = run(lambda: two_sessions(proxy.url, base_url, second_first=False))
    assert recorded["first"] != recorded["second"]
    with replaying(cassette, listening=listening) as proxy:
        replayed = run(lambda: two_sessions(proxy.url, base_url, second_first=True))
    assert replayed == recorded


def test_what_an_mcp_client_awaits_no_answer_to_is_answered_harmlessly_when_not_recorded(
    recorded: tuple[Path, str, tuple[list[Any], list[Any]]], tmp_path: Path
) -> None:
    """A client's GET stream and its notifications the recording lacks (a server that pushed requests over a
    stream when recorded, a client that opens one later): the 405 of a server with no stream, a 202; no miss."""
    cassette, base_url, _ = recorded
    headers = {"mcp-session-id": "never-recorded", "mcp-protocol-version": "2025-11-25"}
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
    answer = {"jsonrpc": "2.0", "id": "server-asked-1", "result": {"roots": []}}
    with (
        replaying(cassette, listening=Listening(ca_directory=tmp_path / "ca")) as proxy,
        httpx.Client(proxy=proxy.url, trust_env=False) as http,
    ):
        stream = http.get(f"{base_url}/mcp/weather", headers={**headers, "accept": "text/event-stream"})
        notified = http.post(f"{base_url}/mcp/weather", headers=headers, json=cancelled)
        answered = http.post(f"{base_url}/mcp/weather", headers=headers, json=answer)
        assert not proxy.misses
    assert (stream.status_code, stream.headers["allow"]) == (405, "POST, DELETE")
    assert (notified.status_code, answered.status_code) == (202, 202)


def test_a_json_rpc_batch_replays_its_answers_under_the_ids_the_client_gives_now(tmp_path: Path) -> None:
    """A session that agreed to 2025-03-26 sends a batch (two requests, one array) and gets their answers (an
    event stream here: the tool logs first); replayed with other ids, the same answers come back under the new
    ids. Under 2025-06-18 the same batch is
    refused with a JSON-RPC error, recorded and replayed as such."""
    originals = tmp_path / "originals.json"
    originals.write_text(json.dumps({"mcpServers": MCP_WORKED["mcpServers"]}))
    cassette = tmp_path / "run.json"
    listening = Listening(ca_directory=tmp_path / "ca")
    accept = {"accept": "application/json, text/event-stream"}

    def batches(proxy_url: str, url: str, first: int) -> list[Any]:
        answers = []
        with httpx.Client(proxy=proxy_url, trust_env=False, headers=accept) as http:
            for version in ("2025-03-26", "2025-06-18"):
                hello = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
                opened = http.post(url, json={"jsonrpc": "2.0", "id": first, "method": "initialize", "params": hello})
                session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": version}
                http.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
                batch = [
                    {"jsonrpc": "2.0", "id": first + 1, "method": "ping"},
                    {"jsonrpc": "2.0", "id": first + 2, "method": "tools/call", "params": {"name": "refresh"}},
                ]
                answered = http.post(url, headers=session, json=batch)
                answers.append((answered.status_code, _answers(answered)))
        return answers

    with mocking(originals, listening) as real, recording(cassette, listening) as proxy:
        url = f"{real.base_url}/mcp/weather"
        recorded = batches(proxy.url, url, first=1)
    (ok, answers), (refused, error) = recorded
    assert (ok, [answer["id"] for answer in answers]) == (200, [2, 3])
    assert answers[1]["result"]["content"][0]["text"] == "Refreshed 3 stations."
    assert (refused, error["error"]["code"]) == (400, -32600)
    with replaying(cassette, listening=listening) as proxy:
        replayed = batches(proxy.url, url, first=11)
        assert not proxy.misses
    (ok, answers), refusal = replayed
    assert (ok, [answer["id"] for answer in answers]) == (200, [12, 13])
    assert [answer["result"] for answer in answers] == [answer["result"] for answer in recorded[0][1]]
    assert refusal == recorded[1]


def test_progress_notifications_replay_under_the_token_the_client_gives_now(tmp_path: Path) -> None:
    """A client that asks progress under a fresh token each run (the Gemini CLI does): replayed, the server's
    progress notifications carry the token the request carries now, not the recorded one, so the client can
    tell which call they are about."""
    originals = tmp_path / "originals.json"
    originals.write_text(json.dumps({"mcpServers": MCP_WORKED["mcpServers"]}))
    cassette = tmp_path / "run.json"
    listening = Listening(ca_directory=tmp_path / "ca")
    accept = {"accept": "application/json, text/event-stream"}

    def refreshed(proxy_url: str, url: str, token: str) -> list[Any]:
        with httpx.Client(proxy=proxy_url, trust_env=False, headers=accept) as http:
            hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            opened = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
            session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            http.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
            params = {"name": "refresh", "_meta": {"progressToken": token}}
            called = http.post(
                url, headers=session, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
            )
            return [json.loads(line[6:]) for line in called.text.splitlines() if line.startswith("data: ")]

    with mocking(originals, listening) as real, recording(cassette, listening) as proxy:
        url = f"{real.base_url}/mcp/weather"
        recorded = refreshed(proxy.url, url, "token-recorded")
    with replaying(cassette, listening=listening) as proxy:
        replayed = refreshed(proxy.url, url, "token-now")
        assert not proxy.misses
    progress = [message["params"] for message in replayed if message.get("method") == "notifications/progress"]
    assert [step["progressToken"] for step in progress] == ["token-now", "token-now"]
    assert [step["progress"] for step in progress] == [1, 3]
    assert replayed[-1] == recorded[-1]  # the tool's answer itself, as recorded


def _answers(response: httpx.Response) -> Any:
    """The JSON body, or the JSON-RPC answers an event stream carries (its notifications aside)."""
    if not response.headers["content-type"].startswith("text/event-stream"):
        return response.json()
    messages = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    return [message for message in messages if "id" in message]
