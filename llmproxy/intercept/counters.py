"""What a store of quota and budget counters is (`Store`) and what one of its operations returns (`Count`):
the interface the counters in this process (`store.MemoryStore`) and in Redis (`redis_store.RedisStore`)
both fill in, below both and below `store.open_store`, which picks one.
"""

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Count:
    """A counter as one operation left it: `used` in the current window, `reset_ms` until the window ends
    (0 when it never does, or nothing is counted yet), and whether the amount asked for was counted."""

    used: int
    reset_ms: int
    admitted: bool = True


class Store(Protocol):
    def admit(self, key: str, amount: int, limit: int, window_ms: int, now_ms: int) -> Count:
        """Count `amount` if `used + amount <= limit`; otherwise count nothing (`admitted` False)."""
        ...

    def add(self, key: str, amount: int, window_ms: int, now_ms: int) -> Count:
        """Count `amount` whatever the total (what already happened: an answer's tokens, a call's cost)."""
        ...

    def peek(self, key: str, window_ms: int, now_ms: int) -> Count:
        """The counter now, without counting."""
        ...

    def describe(self) -> str:
        """Where the counters are, for the log ("in this process", "redis://127.0.0.1:6379/0")."""
        ...

    def forget(self) -> bool:
        """Start every counter afresh (the control API's reset), when they are this proxy's alone; whether it
        did. Counters shared with other proxies are left: they count on them."""
        ...

    def close(self) -> None: ...
