"""A stdio MCP server that misbehaves on purpose, for the tap's bad-input tests: it answers `initialize` and
`ping`, prints a stray line that is not JSON-RPC before each answer, and exits in the middle of `tools/call`."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    print("debug: handling", message["method"], flush=True)  # garbage on stdout
    if message["method"] == "tools/call":
        sys.exit(3)
    result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "broken", "version": "1"}}
    answer = {"jsonrpc": "2.0", "id": message["id"], "result": result if message["method"] == "initialize" else {}}
    print(json.dumps(answer), flush=True)
