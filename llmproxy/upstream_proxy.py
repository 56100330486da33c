"""The proxy a network puts between this machine and the rest — a corporate one, or an outer llmproxy (`llmproxy
record --map … -- pytest` around the pytest plugin's own proxy) — as the environment names it to clients:
`HTTPS_PROXY` and `HTTP_PROXY` (the lower-case forms first, as Python's and curl's clients read them), and
`NO_PROXY`. A proxy that takes the clients' place (the plugin's, which sets those variables to itself for the
tests) goes on through the one they named, so that what worked without it still works.

This machine's own addresses are reached directly, whatever NO_PROXY says, as Go's clients decide: a local
service or stand-in is there, and a proxy elsewhere could not reach it. HTTP(S) requests go through it (a
CONNECT each, with the URL's credentials as `Proxy-Authorization`); credentials are never shown.
"""

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import SplitResult, unquote, urlsplit

from llmproxy.destinations import Destination
from llmproxy.egress import is_loopback
from llmproxy.environment import bypassing_entry
from llmproxy.errors import UsageError

SCHEMES: Final = ("https", "http")


@dataclass(frozen=True, slots=True)
class UpstreamProxy:
    by_scheme: dict[str, Destination]  # the proxy for requests of each scheme
    no_proxy: str = ""
    authorization: str | None = field(default=None, repr=False)  # from the URL's user info

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> "UpstreamProxy | None":
        """The proxy `environ` names, or None. Raises UsageError for one llmproxy cannot go through (a SOCKS
        proxy, a URL it cannot read), naming the variable and the URL without its credentials."""
        get = environ.get
        by_scheme: dict[str, Destination] = {}
        authorization = None
        for scheme in SCHEMES:
            name = f"{scheme.upper()}_PROXY"
            value = (get(name.lower()) or get(name) or "").strip()
            if not value:
                continue
            url = urlsplit(value if "://" in value else f"http://{value}")
            shown = f"{name}={_without_credentials(url)}"
            if url.scheme not in ("http", "https"):
                raise UsageError(f"{shown}: llmproxy goes on through an http:// or https:// proxy only")
            try:
                by_scheme[scheme] = Destination.parse(_without_credentials(url), shown)
            except UsageError as error:
                raise UsageError(f"{shown}: no valid port" if "port" in str(error) else str(error)) from None
            if url.username is not None:
                credentials = f"{unquote(url.username)}:{unquote(url.password or '')}"
                authorization = "Basic " + base64.b64encode(credentials.encode()).decode()
        if not by_scheme:
            return None
        return cls(by_scheme, (get("no_proxy") or get("NO_PROXY") or "").strip(), authorization)

    def via(self, scheme: str, host: str) -> Destination | None:
        """The proxy a request to `host` goes through, or None: directly."""
        proxy = self.by_scheme.get(scheme)
        if proxy is None or is_loopback(host) or bypassing_entry(host.lower().strip("[]"), self.no_proxy):
            return None
        return proxy

    def __str__(self) -> str:
        return ", ".join(sorted({destination.origin for destination in self.by_scheme.values()}))


def _without_credentials(url: SplitResult) -> str:
    host = url.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{url.port}" if url.port is not None else ""
    except ValueError:
        port = ":" + url.netloc.rpartition(":")[2]
    return f"{url.scheme}://{host}{port}"
