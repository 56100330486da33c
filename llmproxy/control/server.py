"""The control port: a loopback HTTP listener on a thread of its own, serving the chaos endpoint
(`llmproxy.intercept.control`, `/llmproxy/chaos`), the REST API (`llmproxy.control.api`,
`/llmproxy/api/v1/…`), the MCP server over Streamable HTTP (`llmproxy.control.mcp.http`, `/llmproxy/mcp`) and
the dashboard's page (`llmproxy.control.ui`, `/llmproxy/ui/`) to callers with the run's token
(`llmproxy.control.auth`: a bearer header, or the page's cookie), and, when the run keeps them, the Prometheus
metrics at `/metrics` to any caller on loopback, without a token (docs/telemetry.md#prometheus: a scraper's
configuration is written before the run's random token exists; the figures are counts, names of models and
hosts, nothing a cassette would redact).

What it refuses, it refuses before doing anything: a client not on loopback or without a token gets 401, a body
over 8 MiB a 413 before it is read. Nothing a caller sends reaches the proxy's own threads except through the
handlers, which answer every failure with one line; a failure of the listener itself is logged, never printed.
"""

import logging
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import orjson

from llmproxy.control import ui
from llmproxy.control.auth import Access, Tokens, allows, cookie_name, cookie_token, loopback
from llmproxy.control.paths import API_BASE, MCP_PATH
from llmproxy.control.router import MAX_BODY, Router
from llmproxy.intercept import control as chaos
from llmproxy.intercept.control import Answer
from llmproxy.intercept.engine import Intercept

if TYPE_CHECKING:  # the MCP SDK is imported on the first MCP request, not by every run
    from llmproxy.control.mcp.http import McpEndpoint

logger = logging.getLogger(__name__)


UNAUTHORISED: Final = Answer(
    401, {"error": "the control API needs the run's bearer token, from loopback"}, (("www-authenticate", "Bearer"),)
)
_KEYS: Final = orjson.OPT_NON_STR_KEYS  # a count by kind keyed by an enum is written as json would write it
FOREIGN: Final = Answer(403, {"error": "a change with the page's cookie must come from the page's own origin"})
METRICS_PATH: Final = "/metrics"
PROMETHEUS_TEXT: Final = "text/plain; version=0.0.4"  # the text exposition format's media type
NO_METRICS: Final = Answer(404, {"error": "this run keeps no metrics: start it with --metrics (docs/telemetry.md)"})


class ControlPlane:
    """Every control request, authenticated, routed: the chaos endpoint and, when the run has one, the API.

    `intercept`: the run's, or how to find the one in use (the pytest plugin swaps in each test's). `api`: the
    REST API, or how to make it on its first request (its endpoints import the mock's, the analysis' and the
    prices' models: most of a replay's start were it made with the port). `fixed`: why the chaos endpoint may
    only show it (409 to anything else); "" lets it change the chaos. `metrics`: the Prometheus exposition of
    the run's figures, when it keeps them."""

    def __init__(
        self,
        intercept: Intercept | Callable[[], Intercept],
        api: Router | Callable[[], Router] | None = None,
        fixed: str = "",
        metrics: Callable[[], bytes] | None = None,
    ) -> None:
        self._intercept = intercept
        self._api: Router | None = None if callable(api) else api
        self._make_api = api if callable(api) else None
        self._api_lock = threading.Lock()
        self.fixed = fixed
        self.metrics = metrics

    @property
    def serves_api(self) -> bool:
        """Whether the port serves the REST API (made or not yet)."""
        return self._api is not None or self._make_api is not None

    @property
    def api(self) -> Router | None:
        """The REST API, made now if this is its first request."""
        if self._api is None and self._make_api is not None:
            with self._api_lock:
                if self._api is None:
                    self._api = self._make_api()
        return self._api

    @property
    def made_api(self) -> Router | None:
        """The REST API if a request made it already (what there is to close)."""
        return self._api

    def scrape(self) -> Answer:
        """`GET /metrics`: the figures in Prometheus's text format."""
        if self.metrics is None:
            return NO_METRICS
        return Answer(200, self.metrics(), media_type=PROMETHEUS_TEXT)

    @property
    def intercept(self) -> Intercept:
        intercept = self._intercept
        return intercept if isinstance(intercept, Intercept) else intercept()

    def handle(self, method: str, target: str, body: bytes, granted: Access) -> Answer:
        path = urlsplit(target).path
        if path.rstrip("/") == chaos.PATH:
            needed = Access.READ if method == "GET" else Access.MUTATE
            if not allows(granted, needed):
                return Answer(403, {"error": f"{method} {chaos.PATH} changes the run: the read-only token cannot"})
            if self.fixed and needed is Access.MUTATE:
                return Answer(409, {"error": f"{method} {chaos.PATH}: {self.fixed}"})
            return chaos.handle(self.intercept, method, target, body)
        api = self.api
        if api is not None and api.serves(target):
            return api.handle(method, target, body, granted)
        listed = [f"GET|PUT|PATCH|DELETE {chaos.PATH}"]
        if api is not None:
            listed += [*api.listing(), f"POST {MCP_PATH}"]
        return Answer(404, {"error": f"no such endpoint: {path}", "endpoints": listed})


class ControlServer:
    """`plane` on 127.0.0.1 (port 0: a free one), answering only the run's tokens."""

    def __init__(self, plane: ControlPlane, tokens: Tokens, port: int = 0) -> None:
        self.plane = plane
        self.tokens = tokens
        self._server = _Server(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.cookie = cookie_name(self.port)
        self.url = self.origin + chaos.PATH  # `LLMPROXY_CONTROL_URL`, as `llmproxy chaos` has always read it
        self.api_url = self.origin + API_BASE if plane.serves_api else None
        self._mcp: McpEndpoint | None = None
        self._mcp_lock = threading.Lock()
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="llmproxy-control", daemon=True
        )
        self._thread.start()

    @property
    def intercept(self) -> Intercept:
        return self.plane.intercept

    def ui_url(self, read_only: bool = False) -> str:
        """The dashboard's URL with the token it is entered with (`read_only`: a page that only reads)."""
        token = self.tokens.read_only if read_only and self.tokens.read_only is not None else self.tokens.full
        return ui.url(self.origin, token)

    def answer(self, client: str, headers: Any, method: str, target: str, read: Any) -> Answer:
        """One request: `read(n)` reads its body, only once it is known to be wanted and small enough."""
        page = ui.serves(target)
        if page and method == "GET":
            entered = ui.entering(target, client, self.tokens, self.cookie)
            if entered is not None:
                return entered
        if method == "GET" and urlsplit(target).path == METRICS_PATH:
            return self.plane.scrape() if loopback(client) else UNAUTHORISED
        authorization = headers.get("authorization")
        cookie = cookie_token(headers.get("cookie"), self.cookie) if authorization is None else None
        granted = self.tokens.grant(client, authorization, cookie)
        if granted is None:
            return UNAUTHORISED
        if cookie is not None and method not in ("GET", "HEAD") and headers.get("origin") != self.origin:
            return FOREIGN
        if page:
            return ui.asset(method, target, granted)
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            return Answer(400, {"error": "content-length is not a number"})
        if length > MAX_BODY:
            return Answer(413, {"error": f"the body is {length} bytes: the control API takes {MAX_BODY} at most"})
        body = read(length) if length > 0 else b""
        if urlsplit(target).path.rstrip("/") == MCP_PATH and (api := self.plane.api) is not None:
            return self.mcp(api).answer(method, target, headers, body, granted, client)
        return self.plane.handle(method, target, body, granted)

    def mcp(self, api: Router) -> "McpEndpoint":
        """The MCP endpoint, started on its first request."""
        with self._mcp_lock:
            if self._mcp is None:
                from llmproxy.control.mcp.http import McpEndpoint

                self._mcp = McpEndpoint(api, self.plane.handle)
            return self._mcp

    def close(self) -> None:
        if (api := self.plane.made_api) is not None:  # the event streams end first: their threads then leave
            api.close()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        with self._mcp_lock:
            if self._mcp is not None:
                self._mcp.close()
                self._mcp = None


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any) -> None:
        """A connection that failed (the client went away mid-answer): logged, never printed on the terminal."""
        logger.debug("the control API's connection from %s failed", client_address, exc_info=True)


def _handler(control: ControlServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            answer = control.answer(self.client_address[0], self.headers, self.command, self.path, self.rfile.read)
            if answer.status in (400, 401, 413):  # its body may be unread: the connection cannot carry another
                self.close_connection = True
            if answer.stream is not None:
                self._stream(answer)
                return
            # orjson: a listing of ten thousand journal entries is written in a fifth of json's time
            data = answer.body if isinstance(answer.body, bytes) else orjson.dumps(answer.body, option=_KEYS)
            self.send_response(answer.status)
            self.send_header("content-type", _content_type(answer.media_type))
            self.send_header("content-length", str(len(data)))
            for name, value in answer.headers:
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            for action in answer.after:  # the caller has its answer: now what it asked for may end the run
                try:
                    action()
                except Exception:
                    logger.exception("the control API failed after answering %s %s", self.command, self.path)

        def _stream(self, answer: Answer) -> None:
            """An answer sent as it comes, until it ends or the caller goes away (then closed, so its reader is
            let go)."""
            assert answer.stream is not None
            self.close_connection = True
            self.send_response(answer.status)
            self.send_header("content-type", _content_type(answer.media_type))
            self.send_header("cache-control", "no-store")
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("connection", "close")
            self.end_headers()
            chunks = answer.stream
            try:
                for chunk in chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
            except OSError:  # the caller went away
                logger.debug("the reader of %s went away", self.path)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()

        do_GET = do_PUT = do_PATCH = do_DELETE = do_POST = _serve

        def log_message(self, format: str, *args: Any) -> None:  # the core never prints
            logger.debug("control API: " + format, *args)

    return Handler


def _content_type(media_type: str) -> str:
    """The content-type header: a text document's is UTF-8, said so (JSON is UTF-8 by definition)."""
    return f"{media_type}; charset=utf-8" if media_type.startswith("text/") else media_type
