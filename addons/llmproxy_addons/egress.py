"""The gate where the proxy connects upstream, in strict replay and mock: every server connection — an HTTP
request let out by `--allow-host`, a raw TCP or TLS tunnel, anything mitmproxy would open — is checked against
the core's rules (llmproxy/egress.py) at the address it resolves to, then pinned to that address, or killed
before it is opened. llmproxy's own relay is reached as always.
"""

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from llmproxy.egress import EgressPolicy, Refused, literal
from llmproxy_addons.stream_relay import StreamRelay

if TYPE_CHECKING:  # made before mitmproxy starts when the lean door serves (it starts mitmproxy only if needed)
    from mitmproxy.proxy.server_hooks import ServerConnectionHookData

logger = logging.getLogger(__name__)

type Resolver = Callable[[str, int], Awaitable[list[str]]]


async def resolve(host: str, port: int) -> list[str]:
    """The addresses the system resolver gives for `host`, in its order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class EgressGate:
    def __init__(
        self, policy: EgressPolicy, relays: Sequence[StreamRelay] = (), opened: Callable[[], bool] = lambda: False
    ) -> None:
        """`opened`: whether the network is open to everything right now (a session whose chain opens it while
        running: the pytest plugin, for a test that records)."""
        self.policy = policy
        self.relays = list(relays)
        self.opened = opened
        self.resolve: Resolver = resolve  # a seam for tests: a name that answers what the test says
        self.refused: list[str] = []  # what was not let out, for the summary

    async def server_connect(self, data: "ServerConnectionHookData") -> None:
        server = data.server
        if server.address is None or server.error or self.opened():
            return
        host, port = str(server.address[0]), int(server.address[1])
        if host == "127.0.0.1" and any(relay.port == port for relay in self.relays):
            return
        outcome = self.policy.check_unresolved(host, port, data.client.sni)
        if outcome is None:  # a name an entry allows: only now is it looked up
            try:
                resolved = await self.resolve(host, port)
            except OSError as error:  # a failed connection, as mitmproxy's own would be: not a refusal
                server.error = f"cannot resolve {host}: {error.strerror or error}"
                return
            outcome = self.policy.check_connection(host, port, data.client.sni, resolved)
        if isinstance(outcome, Refused):
            shown = f"[{host}]" if ":" in host else host
            refusal = f"{shown}:{port}: {outcome.reason}"
            self.refused.append(refusal)
            logger.error("refused to connect to %s", refusal)
            server.error = f"llmproxy refused to connect to {refusal}"
            return
        if server.sni is None and literal(host) is None:
            server.sni = host  # the name the TLS certificate is checked for, once the address is pinned
        server.address = (outcome.address, port)
