"""The MCP server over Streamable HTTP at `/llmproxy/mcp` on the control port.

The control port is a threaded `http.server` (`llmproxy.control.server`); the SDK's Streamable HTTP transport
is an ASGI application. The bridge runs the SDK's session manager on an event loop of its own thread —
stateless, answering JSON rather than event streams, so each POST is one complete exchange — and hands it
each request the control server has already authenticated, as an ASGI scope carrying the caller's access.
A tool call goes to the control plane with that access: a read-only token gets the read-only token's answers.
There is no stream to open (GET) and no session to end (DELETE): both are 405, as the protocol allows.

Built on the first request to the endpoint, so a run that never uses MCP never imports the SDK.
"""

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Final
from urllib.parse import urlsplit

from mcp.server import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from llmproxy.control.auth import Access
from llmproxy.control.mcp.server import mcp_server
from llmproxy.control.mcp.tools import ControlRequest, tools
from llmproxy.control.paths import MCP_PATH
from llmproxy.control.router import MAX_BODY, Router
from llmproxy.intercept.control import Answer

logger = logging.getLogger(__name__)

ACCESS: Final = "llmproxy.access"  # the ASGI scope's key for what the caller's token may do
AFTER: Final = "llmproxy.after"  # the ASGI scope's key for what to do once the answer is sent
TIMEOUT: Final = 300.0  # seconds one MCP request may take before the caller is told it did not finish


type Handle = Callable[[str, str, bytes, Access], Answer]  # the control plane's: method, target, body, granted


class McpEndpoint:
    """The MCP endpoint of one control port: `answer` serves a request, `close` stops its event loop."""

    def __init__(self, api: Router, handle: Handle) -> None:
        def send(request: ControlRequest, ctx: ServerRequestContext[Any, Any]) -> Answer:
            scope = ctx.request.scope if ctx.request is not None else {}
            granted = scope.get(ACCESS, Access.READ)  # none said: the least
            answer = handle(request.method, request.target, request.body, granted)
            scope.get(AFTER, []).extend(answer.after)  # run once the MCP answer is sent (a stop)
            return answer

        server = mcp_server(tools(api), send)
        self._manager = StreamableHTTPSessionManager(
            server, json_response=True, stateless=True, max_request_body_size=MAX_BODY
        )
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="llmproxy-mcp", daemon=True)
        self._thread.start()
        self._ready.wait()

    def answer(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes, granted: Access, client: str
    ) -> Answer:
        """One request, its caller already authenticated with `granted`: the answer, never an exception."""
        if method != "POST":
            return Answer(
                405,
                {"error": f"{method} is not supported on {MCP_PATH}: POST JSON-RPC messages (no event stream here)"},
                (("allow", "POST"),),
            )
        url = urlsplit(target)
        after: list[Callable[[], None]] = []
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": url.path,
            "raw_path": url.path.encode(),
            "query_string": url.query.encode(),
            "root_path": "",
            "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()],
            "client": (client, 0),
            "server": ("127.0.0.1", 0),
            "state": {},
            ACCESS: granted,
            AFTER: after,
        }
        future = asyncio.run_coroutine_threadsafe(_exchange(self._manager, scope, body), self._loop)
        try:
            status, response_headers, data = future.result(TIMEOUT)
        except FutureTimeout:
            future.cancel()
            return Answer(504, {"error": f"the MCP request did not finish in {TIMEOUT:.0f} s"})
        except Exception as error:  # a bug of llmproxy's or the SDK's: logged, one line to the client
            logger.exception("the MCP endpoint failed")
            return Answer(500, {"error": f"llmproxy failed to answer the MCP request: {error}"})
        typed = [value for name, value in response_headers if name.lower() == "content-type"]
        kept = tuple((name, value) for name, value in response_headers if name.lower() != "content-type")
        media_type = typed[0] if typed else "application/json"
        return Answer(status, data, kept, media_type, after=tuple(after))

    def close(self) -> None:
        """Stop its event loop; again, once stopped, is nothing (a run stopped over the API closes once more)."""
        if self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with self._manager.run():
            self._ready.set()
            await self._stop.wait()


async def _exchange(
    manager: StreamableHTTPSessionManager, scope: dict[str, Any], body: bytes
) -> tuple[int, list[tuple[str, str]], bytes]:
    """`scope` with `body` through the SDK's transport: the status, headers and body it answers."""
    status = 500
    headers: list[tuple[str, str]] = []
    chunks: list[bytes] = []
    answered = asyncio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client is there until it has the whole answer
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status = int(message["status"])
            headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in message.get("headers", ())]
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))
            if not message.get("more_body", False):
                answered.set()

    await manager.handle_request(scope, receive, send)
    return status, [(name, value) for name, value in headers if name.lower() != "content-length"], b"".join(chunks)
