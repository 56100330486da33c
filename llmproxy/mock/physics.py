"""Streaming physics: when each event of a mocked stream goes out — time to first token, then gaps from the
tokens each event carries at the given rate, each varied by the jitter. The same seed gives the same
timing, so a paced test is as repeatable as an instant one."""

import random
from collections.abc import Sequence

from llmproxy.mock.spec import Physics


def event_offsets(count: int, physics: Physics | None, tokens_per_event: Sequence[int] | None = None) -> list[float]:
    """Seconds from the start of the response at which each of `count` events is sent."""
    if physics is None:
        return [0.0] * count
    first = physics.ttftMs / 1000
    if physics.tokensPerSecond is None:
        return [first] * count
    rng = random.Random(physics.seed)
    offsets, at = [], first
    for index in range(count):
        if index:
            tokens = tokens_per_event[index] if tokens_per_event is not None else 1
            factor = 1 + rng.uniform(-physics.jitter, physics.jitter) if physics.jitter else 1.0
            at += max(tokens, 0) / physics.tokensPerSecond * factor
        offsets.append(at)
    return offsets
