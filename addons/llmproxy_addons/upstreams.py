"""Where a request goes upstream: `--map HOST=URL` and the path of a `--reverse` target.

The client keeps talking to HOST (its TLS certificate, URLs and Host header as it expects); only the
upstream connection goes elsewhere — a gateway, or a local fake server in tests. Runs after the addons
that record what the client sent.
"""

from collections.abc import Mapping

from mitmproxy import http

from llmproxy.destinations import Destination

__all__ = ["Destination", "Upstreams"]


class Upstreams:
    def __init__(self, mapped: Mapping[str, Destination]) -> None:
        self.mapped = dict(mapped)
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
