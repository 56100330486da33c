"""Profiles set per host while the proxy runs (MockServer's service-scoped chaos registry): registered with an
optional time to live, after which the host is back to normal on its own — a dead man's switch, so chaos
set by a test that crashed does not outlive it. A merge patch changes a profile and keeps its TTL.

A key is a host (`api.openai.com`: any port) or a host and port (`127.0.0.1:8080`: that port only). Expired
entries are removed lazily, when next looked at; all of it runs on the injected clock.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from llmproxy.intercept.profile import ChaosProfile, merged


@dataclass(frozen=True, slots=True)
class Registration:
    profile: ChaosProfile
    expires: float | None  # on the registry's clock (seconds); None: until removed
    ttl_ms: int | None
    serial: int  # which registration: a PUT starts the profile's count of requests afresh, a PATCH keeps it


class HostRegistry:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._entries: dict[str, Registration] = {}
        self._serials = 0
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        """Whether anything is registered (possibly expired): the fast path when nothing is."""
        return bool(self._entries)

    def put(self, host: str, profile: ChaosProfile, ttl_ms: int | None = None) -> None:
        expires = self._clock() + ttl_ms / 1000 if ttl_ms is not None else None
        with self._lock:
            self._serials += 1
            self._entries[_key(host)] = Registration(profile, expires, ttl_ms, self._serials)

    def patch(self, host: str, patch: dict[str, object]) -> ChaosProfile:
        """Merge-patch the host's profile, keeping its TTL. KeyError when it has none; ValueError (pydantic's)
        when the result is not a valid profile."""
        key = _key(host)
        with self._lock:
            registration = self._live(key)
            if registration is None:
                raise KeyError(host)
            profile = merged(registration.profile, patch)
            self._entries[key] = replace(registration, profile=profile)
        return profile

    def remove(self, host: str) -> bool:
        with self._lock:
            return self._entries.pop(_key(host), None) is not None

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def lookup(self, host: str, port: int) -> tuple[str, Registration] | None:
        """The registration for a request to `host:port` (the host-and-port entry first), with its key."""
        if not self._entries:
            return None
        host = host.lower()
        with self._lock:
            for key in (f"{host}:{port}", host):
                registration = self._live(key)
                if registration is not None:
                    return key, registration
        return None

    def snapshot(self) -> dict[str, tuple[ChaosProfile, int | None]]:
        """Every live registration: host → (profile, milliseconds left, or None without a TTL)."""
        now = self._clock()
        with self._lock:
            for key in list(self._entries):
                self._live(key)
            return {
                key: (entry.profile, None if entry.expires is None else max(0, round((entry.expires - now) * 1000)))
                for key, entry in self._entries.items()
            }

    def _live(self, key: str) -> Registration | None:
        """The registration under `key` unless it has expired (then it is removed)."""
        registration = self._entries.get(key)
        if registration is not None and registration.expires is not None and self._clock() >= registration.expires:
            del self._entries[key]
            return None
        return registration


def _key(host: str) -> str:
    return host.strip().lower()
