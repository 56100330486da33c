"""Where a request goes upstream: `--map HOST=URL`, the path of a `--reverse` target, and the proxy the
environment named for the clients (`llmproxy.upstream_proxy`), which it then goes through.

The client keeps talking to HOST (its TLS certificate, URLs and Host header as it expects); only the
upstream connection goes elsewhere — a gateway, or a local fake server in tests. Runs after the addons
that record what the client sent.
"""

from collections.abc import Mapping

from mitmproxy import connection, http
from mitmproxy.net.server_spec import ServerSpec

from llmproxy.destinations import Destination
from llmproxy.upstream_proxy import UpstreamProxy

__all__ = ["Destination", "Upstreams"]


class Upstreams:
    def __init__(self, mapped: Mapping[str, Destination], proxy: UpstreamProxy | None = None) -> None:
        self.mapped = dict(mapped)
        self.proxy = proxy
        self.reverse_prefixes: dict[str, str] = {}  # the path of each reverse target, by listener mode spec

    def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None:  # answered locally
            return
        request = flow.request
        prefix = self.reverse_prefixes.get(flow.client_conn.proxy_mode.full_spec)
        if prefix:
            request.path = prefix + request.path
        destination = self.mapped.get(request.host.lower())
        if destination is not None:
            request.scheme, request.host, request.port = destination.scheme, destination.host, destination.port
            if destination.path_prefix:
                request.path = destination.path_prefix + request.path
        if self.proxy is not None:
            _through(flow, self.proxy.via(request.scheme, request.host))

    def http_connect_upstream(self, flow: http.HTTPFlow) -> None:
        """The CONNECT that opens a tunnel through the environment's proxy: its credentials, if the URL had any."""
        if self.proxy is not None and self.proxy.authorization is not None:
            flow.request.headers["proxy-authorization"] = self.proxy.authorization


def _through(flow: http.HTTPFlow, proxy: Destination | None) -> None:
    """The request's connection opened through `proxy` (None: directly). mitmproxy connects lazily, after this
    hook, and tunnels through `server_conn.via` (docs/mitmproxy.md#what-llmproxy-relies-on); a connection this
    client already opened elsewhere is not changed, but a new one made."""
    via: ServerSpec | None = None
    if proxy is not None:
        via = ("https" if proxy.scheme == "https" else "http", (proxy.host, proxy.port))
    server = flow.server_conn
    if server.via == via:
        return
    if server.connected:
        flow.server_conn = connection.Server(address=(flow.request.host, flow.request.port))
    flow.server_conn.via = via
