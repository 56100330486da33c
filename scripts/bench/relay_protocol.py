"""What the connection protocol of the relay and the lean door costs a request by itself
(docs/performance.md#where-each-mode-stands): its `HttpConnection` fed the same small request again and again on one
keep-alive connection, a stub server answering every request with one fixed reply, writes going nowhere — the
HTTP/1.1 reading, framing and writing, without the answer chain or the sockets.

    .venv/bin/python scripts/bench/relay_protocol.py [OTHER/http_connection.py …]

Each extra argument is another version of `addons/llmproxy_addons/http_connection.py` (or of `stream_relay.py`,
which held the protocol as `_Connection` before: `git show OLD:addons/llmproxy_addons/stream_relay.py >
/tmp/old_relay.py`), measured in the same process, the versions taking turns. Prints CPU microseconds per request,
the median of 5 rounds of 20,000.
"""

import argparse
import asyncio
import gc
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "addons")]

from llmproxy.chain.reply import Reply  # noqa: E402

BODY = b'{"model":"gpt-5-mini","messages":[{"role":"user","content":"Write a haiku about a proxy."}]}'
REQUEST = (
    b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:8000\r\ncontent-type: application/json\r\n"
    b"authorization: Bearer bench-token\r\ncontent-length: %d\r\n\r\n" % len(BODY)
) + BODY
ANSWER = b"x" * 617  # the mock's answer to it is 617 bytes


class Transport(asyncio.Transport):
    def write(self, data: Any) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        raise AssertionError("the relay closed a keep-alive connection")


class Relay:
    def answer_request(self, request: Any) -> Reply:
        return Reply(200, (("content-type", "application/json"),), ANSWER)

    def websocket_for(self, request: Any) -> None:
        return None

    def answer(self, method: str, target: str, headers: dict[str, str], body: bytes, version: str = "") -> Reply:
        return Reply(200, (("content-type", "application/json"),), ANSWER)

    def websocket(self, target: str, headers: dict[str, str]) -> None:
        return None


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"relay_{abs(hash(str(path)))}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def microseconds(module: ModuleType, requests: int) -> float:
    connection = getattr(module, "HttpConnection", None) or module._Connection
    connection = connection(Relay())
    connection.connection_made(Transport())
    gc.disable()
    start = time.process_time()
    for _ in range(requests):
        connection.data_received(REQUEST)
    spent = time.process_time() - start
    gc.enable()
    return spent / requests * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("others", nargs="*", type=Path, help="other versions of stream_relay.py")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=20_000)
    args = parser.parse_args()
    paths = [ROOT / "addons" / "llmproxy_addons" / "http_connection.py", *args.others]
    modules = [load(path) for path in paths]
    runs: dict[Path, list[float]] = {path: [] for path in paths}
    for _ in range(args.rounds):
        for path, module in zip(paths, modules, strict=True):
            runs[path].append(microseconds(module, args.requests))
    for path in paths:
        print(f"{statistics.median(runs[path]):7.2f} µs CPU a request  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
