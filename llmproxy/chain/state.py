"""The runtime control surface: a stage's settings while the proxy runs.

A stage keeps what may change in one `State`, reads it once per request, and gets a consistent whole: the
value is replaced, never changed in place, so a request sees either the old settings or the new ones, never
half of each. Any thread may `swap` (a test between two cases, a control API, the pytest plugin).
"""

import threading


class State[T]:
    __slots__ = ("_lock", "_value")

    def __init__(self, value: T) -> None:
        self._value = value
        self._lock = threading.Lock()

    @property
    def value(self) -> T:
        return self._value

    def swap(self, value: T) -> T:
        """Put `value` in place for the requests that come next; the value it replaces."""
        with self._lock:
            previous, self._value = self._value, value
        return previous
