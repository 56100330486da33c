"""llmproxy's own base URL (`$LLMPROXY_BASE_URL`) in record and replay: a listener for clients set by base
URL, whose requests go where their route says (llmproxy.providers.origins) before any other addon sees them,
so they are recorded and replayed exactly as if they had come through the proxy. Runs before the proxy door.

A request for one of llmproxy's own listeners that comes through the proxy (a client with both a base URL and
the proxy variables) is sent where that listener would send it: mitmproxy refuses to connect to itself.
"""

from mitmproxy import http

from llmproxy.destinations import Destination
from llmproxy.providers.compatible import LOOPBACK_HOSTS
from llmproxy.providers.origins import origin_for
from llmproxy.providers.routes import detect

PLACEHOLDER = "http://127.0.0.1:9"  # the listener's nominal upstream: every request is sent elsewhere
_UNROUTED = "llmproxy.unrouted"  # flow.metadata key: a base-URL request with nowhere to go


class BaseUrl:
    def __init__(self) -> None:
        # once running: the base-URL listener's mitmproxy mode and port, and the reverse listeners' targets
        self.spec: str | None = None
        self.port: int | None = None
        self.reverse: dict[int, Destination] = {}

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        request = flow.request
        if flow.client_conn.proxy_mode.full_spec != self.spec:
            if request.host not in LOOPBACK_HOSTS:
                return
            if (reverse := self.reverse.get(request.port)) is not None:
                request.scheme, request.host, request.port = reverse.scheme, reverse.host, reverse.port
                request.path = reverse.path_prefix + request.path
                return
            if request.port != self.port:
                return
        route = detect("127.0.0.1", request.path, request.headers, method=request.method)
        origin = origin_for(route, request.path) if route is not None else None
        if origin is None:
            flow.metadata[_UNROUTED] = route.provider.value if route is not None else None
            return
        target = Destination.parse(origin)
        request.scheme, request.host, request.port = target.scheme, target.host, target.port

    def request(self, flow: http.HTTPFlow) -> None:
        if _UNROUTED not in flow.metadata:
            return
        provider = flow.metadata[_UNROUTED]
        what = f"{provider} has no public host" if provider else "this is no LLM API path llmproxy knows"
        flow.response = http.Response.make(
            404,
            f"llmproxy: {flow.request.method} {flow.request.path}: {what}; give its upstream a listener of its "
            "own with --reverse URL\n",
            {"content-type": "text/plain; charset=utf-8"},
        )
