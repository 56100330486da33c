"""What may leave the machine when replay is strict (`--record-mode none`) or llmproxy mocks: only what an
`--allow-host` entry lets out, decided by where the connection really goes, not by what the request says.

Two checks, both needed:

* **The request** (`check_request`): the host it will be sent to must be named by an entry (and its port, if
  the entry gives one), and every name the client asserts — the `Host` header (or HTTP/2 `:authority`) and
  the TLS SNI — must be that same host. An absolute-URI request to ``127.0.0.1:PORT`` carrying ``Host:
  api.github.com``, or a CONNECT to ``127.0.0.1:PORT`` followed by TLS for ``api.github.com``, is refused.
* **The connection** (`check_connection`), where the proxy connects (after DNS): the same name rule, then the
  resolved addresses. A name entry lets out only public addresses — an allowed name that resolves to
  loopback, a private network, link-local (cloud metadata), or any other special-purpose range is refused.
  An address entry (``--allow-host 127.0.0.1:8080``) lets out exactly that address. The connection is then
  pinned to the address that was checked, so a second DNS answer cannot send it elsewhere. IPv4-mapped and
  other IPv6 forms that embed an IPv4 address are judged by the address they embed.

Destinations the user configured themselves (`--map` targets, `--reverse` targets) and llmproxy's own relay
are reached as configured. A policy for a test suite (the pytest plugin's) also lets out this machine's own
services (`local_services`): a request to a loopback address or name that is not an LLM API call — a tool
server the test started is its fixture, which no cassette holds — while an LLM API call there is still
answered from the recording. Pure: the adapter (llmproxy_addons/egress.py) resolves names and applies the
decision.
"""

import ipaddress
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from llmproxy.errors import UsageError

type Address = ipaddress.IPv4Address | ipaddress.IPv6Address

LOOPBACK_NAMES: Final = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})

_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


@dataclass(frozen=True, slots=True)
class Refused:
    reason: str


@dataclass(frozen=True, slots=True)
class Permitted:
    address: str  # where to connect: the checked address, or the configured host of an explicit destination


@dataclass(frozen=True, slots=True)
class AllowEntry:
    host: str  # a lower-case name without a trailing dot, or an address in its canonical form
    port: int | None = None
    address: Address | None = None  # set when the entry is an address

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"

    def names(self, host: str, port: int | None) -> bool:
        """Whether this entry names `host` on `port` (None: on any port, as a name looked up)."""
        if self.port is not None and port is not None and self.port != port:
            return False
        if self.address is not None:
            return literal(host) == self.address
        return self.host == host


def parse_entry(value: str) -> AllowEntry:
    """``HOST``, ``HOST:PORT``, ``ADDRESS``, ``ADDRESS:PORT``, ``[IPV6]:PORT``. Raises UsageError."""
    text = value.strip().lower()
    expects = f"--allow-host expects HOST, HOST:PORT or an address (api.github.com, 127.0.0.1:8080), got {value!r}"
    if "/" in text or "@" in text:
        raise UsageError(expects)
    try:
        host, port = split_host_port(text)
    except ValueError:
        raise UsageError(f"--allow-host: {value!r} has no valid port (a number from 1 to 65535)") from None
    address = literal(host)
    if address is None and not _NAME.fullmatch(host):
        raise UsageError(expects)
    if port is not None and not 0 < port < 65536:
        raise UsageError(f"--allow-host: {value!r} has no valid port (a number from 1 to 65535)")
    return AllowEntry(str(address) if address is not None else host, port, address)


@dataclass(frozen=True, slots=True)
class EgressPolicy:
    entries: tuple[AllowEntry, ...] = ()
    explicit: frozenset[tuple[str, int]] = field(default_factory=frozenset)  # configured destinations
    local_services: bool = False  # loopback, but for LLM API calls (the pytest plugin's tests' own services)

    @classmethod
    def parse(cls, values: Iterable[str], *, local_services: bool = False) -> "EgressPolicy":
        return cls(tuple(parse_entry(value) for value in values), local_services=local_services)

    def with_explicit(self, destinations: Collection[tuple[str, int]]) -> "EgressPolicy":
        """Also reach these (host, port) as configured: `--map` and `--reverse` targets, llmproxy's relay."""
        added = {(normal_host(host), port) for host, port in destinations}
        return replace(self, explicit=self.explicit | added)

    def names(self, host: str, port: int | None) -> bool:
        """Whether an entry names `host` — on `port`, or on any port when None (a name looked up)."""
        host = normal_host(host)
        return any(entry.names(host, port) for entry in self.entries)

    def check_request(
        self, host: str, port: int, asserted: Iterable[str | None], *, llm_api: bool = False
    ) -> Refused | None:
        """Whether a request the cassette does not answer may go on to `host:port`; `asserted`: the names the
        client gave (Host header, TLS SNI), None where it gave none; `llm_api`: whether it is an LLM API call,
        which `local_services` does not let out."""
        host = normal_host(host)
        if llm_api and self._entry(host, port) is None and self._local(host):
            return Refused("an LLM API call on this machine is answered from the recording, not let out")
        return self._check_names(host, port, asserted)

    def check_unresolved(self, host: str, port: int, sni: str | None) -> Refused | Permitted | None:
        """The decision about a connection when it needs no DNS answer (a configured destination, a name no
        entry allows, an address); None when `host` must be resolved first. A name that is not allowed is
        never looked up: a DNS query is itself a way out."""
        host = normal_host(host)
        early = self._before_addresses(host, port, sni)
        if early is not None or literal(host) is None:
            return early
        return self._by_address(host, port, [host])

    def check_connection(self, host: str, port: int, sni: str | None, resolved: Sequence[str]) -> Refused | Permitted:
        """Whether the proxy may connect to `host:port`, whose name resolved to `resolved` (addresses), and
        which address to connect to."""
        host = normal_host(host)
        return self._before_addresses(host, port, sni) or self._by_address(host, port, resolved)

    def _before_addresses(self, host: str, port: int, sni: str | None) -> Refused | Permitted | None:
        if (host, port) in self.explicit:
            return Permitted(host)
        return self._check_names(host, port, [sni])

    def _by_address(self, host: str, port: int, resolved: Sequence[str]) -> Refused | Permitted:
        entry = self._entry(host, port)
        addresses = [judged(ipaddress.ip_address(address.partition("%")[0])) for address in resolved]
        if entry is None:  # a local service (`_check_names` let nothing else through): this machine only
            local = [address for address in addresses if address.is_loopback]
            if local:
                return Permitted(str(local[0]))
            shown = ", ".join(sorted(map(str, addresses))) or "no address"
            return Refused(f"{host} resolves to {shown}, not to this machine")
        for address in addresses:
            if address == entry.address or (entry.address is None and is_public(address)):
                return Permitted(str(address))
        if not addresses:
            return Refused(f"{host} resolves to no address")
        shown = ", ".join(sorted({f"{address} ({kind(address)})" for address in addresses}))
        if entry.address is not None:
            return Refused(f"{host} resolves to {shown}, not {entry.address}")
        suggestion = str(AllowEntry(str(addresses[0]), port, addresses[0]))
        return Refused(
            f"{host} resolves to {shown}: an allowed name reaches only public addresses; "
            f"to allow this one, name it: --allow-host {suggestion}"
        )

    def _check_names(self, host: str, port: int, asserted: Iterable[str | None]) -> Refused | None:
        if self._entry(host, port) is None and not self._local(host):
            if is_loopback(host):  # a client's own local daemon, most likely: say how to let it through
                address = literal(host) or ipaddress.ip_address("127.0.0.1")  # a name lets out no loopback address
                entry = AllowEntry(str(address), port, address)
                return Refused(
                    f"no --allow-host entry names it; {host} is this machine, whose services pass through when "
                    f"llmproxy runs the command (-- CMD); else name it: --allow-host {entry}"
                )
            return Refused("no --allow-host entry names it")
        for name in asserted:
            if name is None or not name.strip():
                continue
            try:
                claimed = normal_host(split_host_port(name.strip().lower())[0])
            except ValueError:
                return Refused(f"the request names {name!r}, which is not a host")
            if claimed != host and not (literal(claimed) is not None and literal(claimed) == literal(host)):
                return Refused(f"the request names {claimed} but would go to {host}: the names must match")
        return None

    def _entry(self, host: str, port: int) -> AllowEntry | None:
        return next((entry for entry in self.entries if entry.names(host, port)), None)

    def _local(self, host: str) -> bool:
        return self.local_services and is_loopback(host)


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 (and IPv4-mapped forms), or a name for them (`LOOPBACK_NAMES`): a name is never sent to a
    resolver to find out."""
    name = normal_host(host)
    address = literal(name)
    return address.is_loopback if address is not None else name in LOOPBACK_NAMES


def split_host_port(text: str) -> tuple[str, int | None]:
    """``host``, ``host:port``, ``[v6]``, ``[v6]:port`` or a bare IPv6 address; the port None when absent."""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    if not port:
        return host, None
    if not port.isdigit():
        raise ValueError(f"not a port: {port!r}")
    return host, int(port)


def normal_host(host: str) -> str:
    """Lower case, no trailing dot, no brackets; an address in its canonical form."""
    host = host.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")
    address = literal(host)
    return str(address) if address is not None else host


def literal(host: str) -> Address | None:
    """The address `host` spells in a standard form (an IPv4-mapped IPv6 address as its IPv4 address), else
    None. Shorthands such as ``127.1`` or ``2130706433`` are names here: they resolve, and are judged, like
    any name."""
    try:
        return judged(ipaddress.ip_address(host.removeprefix("[").removesuffix("]").partition("%")[0]))
    except ValueError:
        return None


def judged(address: Address) -> Address:
    """The address a connection really reaches: an IPv4-mapped IPv6 address is its IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_public(address: Address) -> bool:
    """Globally reachable, and not an IPv6 form that embeds a non-public IPv4 address (6to4, Teredo, NAT64)."""
    if not address.is_global or address.is_multicast:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        embedded = [address.sixtofour, *(address.teredo or ())]
        if address in ipaddress.IPv6Network("64:ff9b::/96"):
            embedded.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        return all(inner is None or is_public(inner) for inner in embedded)
    return True


def kind(address: Address) -> str:
    for name, test in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("unspecified", address.is_unspecified),
        ("multicast", address.is_multicast),
        ("private", address.is_private),
    ):
        if test:
            return name
    return "public" if is_public(address) else "reserved"
