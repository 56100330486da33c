"""A mock MCP server's `tools/call` over Streamable HTTP (docs/performance.md#mock-mcp-servers): `llmproxy mock`
serving a tool from its expectations file at its base URL, against the same tool served by the official `mcp`
SDK's own server (`MCPServer`, once FastMCP, under uvicorn) — both answering JSON, with sessions, in one run.

    .venv/bin/python scripts/bench/mcp_mock.py [--rounds N] [--seconds S] [--concurrency C]

Every server is a process of its own, and so is the load generator (this script with `--load`): raw HTTP/1.1
keep-alive connections on asyncio, each opening an MCP session (`initialize`, `notifications/initialized`) and
then sending the same `tools/call` again and again. Rounds alternate the order of the servers; the table gives
medians over rounds, and the ratio of requests per second.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from proxy import BIN, free_port, wait_listening  # noqa: E402

ANSWER = "Sunny, 21 °C"
TOOL = {
    "name": "get_forecast",
    "description": "The forecast for a city",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "results": [{"text": ANSWER}],
}
SDK_SERVER = f"""
import sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("weather")


@server.tool()
def get_forecast(city: str) -> str:
    \"\"\"The forecast for a city\"\"\"
    return {ANSWER!r}


server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), json_response=True)
"""
HEADERS = "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes, body: bytes
) -> tuple[int, dict[str, str], bytes]:
    writer.write(head + f"content-length: {len(body)}\r\n\r\n".encode() + body)
    await writer.drain()
    status_line = await reader.readline()
    headers: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        data = await reader.readexactly(int(headers["content-length"]))
    else:  # chunked
        data = b""
        while (size := int((await reader.readline()).strip(), 16)) > 0:
            data += await reader.readexactly(size)
            await reader.readline()
        await reader.readline()
    return int(status_line.split()[1]), headers, data


async def _connection(port: int, path: str, until: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    base = f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n{HEADERS}"
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    status, headers, _ = await _exchange(reader, writer, base.encode(), json.dumps(initialize).encode())
    assert status == 200, status
    session = f"mcp-session-id: {headers['mcp-session-id']}\r\nmcp-protocol-version: 2025-06-18\r\n"
    head = (base + session).encode()
    notified = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await _exchange(reader, writer, head, json.dumps(notified).encode()))[0] == 202
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "get_forecast", "arguments": {"city": "Paris"}},
    }
    body = json.dumps(call).encode()
    while time.monotonic() < until:
        status, _, data = await _exchange(reader, writer, head, body)
        assert status == 200, (status, data[:200])
        assert ANSWER in data.decode(), data[:200]
        counts[0] += 1
    writer.close()


async def _load(port: int, path: str, concurrency: int, seconds: float) -> float:
    counts = [0]
    start = time.monotonic()
    await asyncio.gather(*(_connection(port, path, start + seconds, counts) for _ in range(concurrency)))
    return counts[0] / (time.monotonic() - start)


def measure(port: int, path: str, concurrency: int, seconds: float) -> float:
    argv = [sys.executable, __file__, "--load", str(port), path, str(concurrency), str(seconds)]
    return float(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--load", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load:
        port, path, concurrency, seconds = args.load
        print(asyncio.run(_load(int(port), path, int(concurrency), float(seconds))))
        return
    started: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        expectations = workdir / "mcp.json"
        expectations.write_text(json.dumps({"mcpServers": [{"name": "weather", "tools": [TOOL]}]}))
        mock_port, sdk_port = free_port(), free_port()
        environment = {**os.environ, "HOME": str(workdir), "LLMPROXY_HOME": str(workdir / "llmproxy")}
        targets = {"llmproxy mock": (mock_port, "/mcp/weather"), "mcp SDK (MCPServer)": (sdk_port, "/mcp")}
        try:
            mock_log, sdk_log = workdir / "mock.log", workdir / "sdk.log"
            mock = [
                str(BIN / "llmproxy"),
                "mock",
                "--expectations",
                str(expectations),
                "--base-url-port",
                str(mock_port),
            ]
            started.append(
                subprocess.Popen(mock, stdout=subprocess.DEVNULL, stderr=mock_log.open("wb"), env=environment)
            )
            wait_listening(mock_port, started[-1], "llmproxy mock", mock_log)
            sdk = [sys.executable, "-c", SDK_SERVER, str(sdk_port)]
            started.append(subprocess.Popen(sdk, stdout=subprocess.DEVNULL, stderr=sdk_log.open("wb"), env=environment))
            wait_listening(sdk_port, started[-1], "the SDK's server", sdk_log)
            rates: dict[str, list[float]] = {name: [] for name in targets}
            for round_number in range(args.rounds):
                order = list(targets) if round_number % 2 == 0 else list(reversed(targets))
                for name in order:
                    port, path = targets[name]
                    rates[name].append(measure(port, path, args.concurrency, args.seconds))
        finally:
            for process in started:
                process.terminate()
            for process in started:
                process.wait(timeout=30)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    print(f"tools/call over Streamable HTTP, concurrency {args.concurrency}, median of {args.rounds} rounds")
    print("| server | requests/s |\n|---|---|")
    for name, rate in medians.items():
        print(f"| {name} | {rate:,.0f} |")
    mock_rate, sdk_rate = medians.values()
    print(f"\nllmproxy mock / mcp SDK: {mock_rate / sdk_rate:.1f}x")


if __name__ == "__main__":
    main()
