"""Failover: the first requests fail with the given statuses in turn, then every request succeeds — what an
SDK's own retries, or an agent's fallback logic, should get through."""

import threading

from llmproxy.mock.spec import ErrorReply, Failover, Respond


class FailoverState:
    def __init__(self, failover: Failover) -> None:
        self._failures = [
            ErrorReply(
                status=status,
                message=f"simulated failure {number} of {len(failover.failWith)} (llmproxy mock failover)",
                retryAfter=failover.retryAfter,
            )
            for number, status in enumerate(failover.failWith, 1)
        ]
        self._then = failover.then
        self._served = 0
        self._lock = threading.Lock()

    def next(self) -> Respond | ErrorReply:
        with self._lock:
            served = self._served
            self._served += 1
        return self._failures[served] if served < len(self._failures) else self._then
