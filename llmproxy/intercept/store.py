"""Where quota and budget counters live: one small interface (`counters.Store`), kept in this process by default
(`MemoryStore`) or in Redis (`llmproxy.intercept.redis_store`) so that several proxies — pytest-xdist
workers, parallel CI jobs on several machines — share one quota and one budget exactly.

A counter is a fixed window: it starts at its first count and is forgotten `window_ms` later (0: never, for
a budget). `admit` counts only when the total stays within the limit, in one atomic step, so N proxies
admitting against one limit admit exactly `limit` between them.
"""

import threading

from llmproxy.intercept.counters import Count, Store


class MemoryStore:
    """Counters in this process, on the injected clock (`now_ms`), under one lock."""

    def __init__(self) -> None:
        self._windows: dict[str, tuple[int, int]] = {}  # key → (window start, used)
        self._lock = threading.Lock()

    def admit(self, key: str, amount: int, limit: int, window_ms: int, now_ms: int) -> Count:
        with self._lock:
            start, used = self._current(key, window_ms, now_ms)
            if used + amount > limit:
                return Count(used, _reset(start, used, window_ms, now_ms), admitted=False)
            return self._count(key, start, used + amount, window_ms, now_ms)

    def add(self, key: str, amount: int, window_ms: int, now_ms: int) -> Count:
        with self._lock:
            start, used = self._current(key, window_ms, now_ms)
            return self._count(key, start, used + amount, window_ms, now_ms)

    def peek(self, key: str, window_ms: int, now_ms: int) -> Count:
        with self._lock:
            start, used = self._current(key, window_ms, now_ms)
        return Count(used, _reset(start, used, window_ms, now_ms))

    def describe(self) -> str:
        return "in this process"

    def forget(self) -> bool:
        with self._lock:
            self._windows.clear()
        return True

    def close(self) -> None:
        pass

    def _current(self, key: str, window_ms: int, now_ms: int) -> tuple[int, int]:
        """The window in force: the stored one, or a fresh one starting now when it has ended."""
        start, used = self._windows.get(key, (now_ms, 0))
        if window_ms and now_ms >= start + window_ms:
            return now_ms, 0
        return (start, used) if used else (now_ms, 0)

    def _count(self, key: str, start: int, used: int, window_ms: int, now_ms: int) -> Count:
        self._windows[key] = (start, used)
        return Count(used, _reset(start, used, window_ms, now_ms))


def _reset(start: int, used: int, window_ms: int, now_ms: int) -> int:
    return max(0, start + window_ms - now_ms) if window_ms and used else 0


def open_store(url: str | None) -> Store:
    """The counters `--state` names: None keeps them in this process; `redis://…` connects now, and raises
    UsageError in one line when the server cannot be used."""
    if url is None:
        return MemoryStore()
    from llmproxy.intercept.redis_store import RedisStore

    return RedisStore(url)
