"""Quota and budget counters in Redis (`--state redis://HOST:PORT/N`), shared by every proxy that names the same
server, database and namespace.

Each counter is one Redis key holding an integer, with a millisecond expiry set at its first count: Redis's
own fixed-window idiom, on Redis's clock, so proxies on machines whose clocks differ still agree on a
window. A check-and-count is one Lua script (atomic on the server), so N proxies admitting against one limit
admit exactly `limit` requests between them. A Redis that cannot be reached fails the run at start, with one
line, rather than each proxy falling back to a private count.

`?namespace=NAME` in the URL prefixes every key (default `llmproxy`): give each CI pipeline its own, or a
budget spent by yesterday's run is still spent today.
"""

from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis

from llmproxy.errors import UsageError
from llmproxy.intercept.counters import Count

_ADMIT: Final = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if used + amount > tonumber(ARGV[2]) then
  return {0, used, redis.call('PTTL', KEYS[1])}
end
used = redis.call('INCRBY', KEYS[1], amount)
if used == amount and tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return {1, used, redis.call('PTTL', KEYS[1])}
"""

_ADD: Final = """
local amount = tonumber(ARGV[1])
local used = redis.call('INCRBY', KEYS[1], amount)
if used == amount and tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, used, redis.call('PTTL', KEYS[1])}
"""

_PEEK: Final = """
return {1, tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1])}
"""

TIMEOUT_SECONDS: Final = 2.0


class RedisStore:
    def __init__(self, url: str) -> None:
        """Connects and checks the server answers; raises UsageError in one line when it does not."""
        self.url, self.namespace, address = _split(url)
        self._client: redis.Redis = redis.Redis.from_url(
            address, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS
        )
        try:
            self._client.ping()
            self._admit = self._client.register_script(_ADMIT)
            self._add = self._client.register_script(_ADD)
            self._peek = self._client.register_script(_PEEK)
        except redis.RedisError as error:
            self._client.close()
            raise UsageError(f"--state {self.url}: cannot use Redis: {error}") from None

    def admit(self, key: str, amount: int, limit: int, window_ms: int, now_ms: int) -> Count:
        return _count(self._admit(keys=[self._key(key)], args=[amount, limit, window_ms]))

    def add(self, key: str, amount: int, window_ms: int, now_ms: int) -> Count:
        return _count(self._add(keys=[self._key(key)], args=[amount, window_ms]))

    def peek(self, key: str, window_ms: int, now_ms: int) -> Count:
        return _count(self._peek(keys=[self._key(key)]))

    def describe(self) -> str:
        return f"in Redis at {self.url}"

    def forget(self) -> bool:
        return False  # shared with the other proxies of the namespace: not this one's to reset

    def close(self) -> None:
        self._client.close()

    def _key(self, key: str) -> str:
        return f"{self.namespace}:{key}"


def _count(result: Any) -> Count:
    admitted, used, ttl = result
    return Count(int(used), max(0, int(ttl)), admitted=bool(admitted))


def _split(url: str) -> tuple[str, str, str]:
    """The URL as shown (no password), the key namespace, and the address for the client (without our own
    `namespace` parameter). Raises UsageError for anything but redis:// or rediss://."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        raise UsageError(f"--state {url!r}: expected redis://HOST:PORT/N")
    query = parse_qsl(parts.query)
    namespace = next((value for name, value in query if name == "namespace"), "llmproxy")
    rest = urlencode([(name, value) for name, value in query if name != "namespace"])
    address = urlunsplit(parts._replace(query=rest))
    shown = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "") + (parts.path or "")
    return shown, namespace, address
