"""Who may call the control plane, and what: loopback clients only, with the run's bearer token (everything)
or its read-only token (only what reads). Each endpoint says which it is; one that does not is taken to change
the run (`Access.MUTATE`: fail closed), so a read-only token can never reach it by an oversight."""

import hmac
import ipaddress
from dataclasses import dataclass
from enum import StrEnum


class Access(StrEnum):
    READ = "read"  # looks only: status, journal, OpenAPI
    MUTATE = "mutate"  # changes the run: expectations, chaos, clearing the journal


@dataclass(frozen=True, slots=True)
class Tokens:
    full: str
    read_only: str | None = None

    def grant(self, client: str, authorization: str | None) -> Access | None:
        """What `client` (an IP address) may do with the `authorization` header it sent; None: nothing (401)."""
        try:
            if not ipaddress.ip_address(client).is_loopback:
                return None
        except ValueError:
            return None
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        token = given.strip().encode()
        if hmac.compare_digest(token, self.full.encode()):
            return Access.MUTATE
        if self.read_only is not None and hmac.compare_digest(token, self.read_only.encode()):
            return Access.READ
        return None


def allows(granted: Access, needed: Access) -> bool:
    """Whether a caller granted `granted` may call what needs `needed`."""
    return granted is Access.MUTATE or needed is Access.READ
