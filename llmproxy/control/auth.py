"""Who may call the control plane, and what: loopback clients only, with the run's bearer token (everything)
or its read-only token (only what reads). Each endpoint says which it is; one that does not is taken to change
the run (`Access.MUTATE`: fail closed), so a read-only token can never reach it by an oversight.

The dashboard's page cannot send a header on every request it makes (an `<img>`, the event stream), so a
browser may carry the token in a cookie instead, set by the control port when the page is first opened with
`?token=` (as Jupyter does). The cookie is named after the port (cookies are kept per host, not per port: two
runs side by side must not take each other's), HttpOnly and SameSite=Strict; a request that changes the run
with only the cookie must also come from the page's own origin (`Origin`), so no other page on this machine
can use it."""

import hmac
import ipaddress
from dataclasses import dataclass
from enum import StrEnum
from http.cookies import CookieError, SimpleCookie


class Access(StrEnum):
    READ = "read"  # looks only: status, journal, OpenAPI
    MUTATE = "mutate"  # changes the run: expectations, chaos, clearing the journal


@dataclass(frozen=True, slots=True)
class Tokens:
    full: str
    read_only: str | None = None

    def grant(self, client: str, authorization: str | None, cookie: str | None = None) -> Access | None:
        """What `client` (an IP address) may do with the `authorization` header it sent, or else the token its
        cookie holds (`cookie`); None: nothing (401)."""
        if not loopback(client):
            return None
        if authorization is None and cookie is not None:
            return self.access(cookie)
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        return self.access(given.strip())

    def access(self, token: str) -> Access | None:
        """What `token` may do; None when it is neither of the run's."""
        given = token.encode()
        if hmac.compare_digest(given, self.full.encode()):
            return Access.MUTATE
        if self.read_only is not None and hmac.compare_digest(given, self.read_only.encode()):
            return Access.READ
        return None


def loopback(client: str) -> bool:
    """Whether `client` (an IP address) is on this machine's loopback."""
    try:
        return ipaddress.ip_address(client).is_loopback
    except ValueError:
        return False


def allows(granted: Access, needed: Access) -> bool:
    """Whether a caller granted `granted` may call what needs `needed`."""
    return granted is Access.MUTATE or needed is Access.READ


def cookie_name(port: int) -> str:
    """The cookie that carries the token of the control port on `port`."""
    return f"llmproxy-token-{port}"


def cookie_token(header: str | None, name: str) -> str | None:
    """The value of cookie `name` in a `cookie` header; None when it has none (or cannot be read)."""
    if not header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None
