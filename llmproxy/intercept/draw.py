"""Reproducible chance: the same seed and the same requests give the same faults, in every run and through
either door.

A draw is a hash of (seed, the profile's scope, the request's number in that scope, what it is for), not
the next value of a shared generator: concurrent requests to other profiles, or a retry elsewhere, never
shift which request a profile faults. A run without `--seed` draws its seed once and reports it, so a
failure it found can be replayed exactly.
"""

import hashlib
import secrets

_SCALE = float(2**64)


def chance(seed: int, scope: str, number: int, purpose: str) -> float:
    """A uniform value in [0, 1) for the `number`th request a profile in `scope` saw."""
    digest = hashlib.blake2b(f"{seed}\0{scope}\0{number}\0{purpose}".encode(), digest_size=8).digest()
    return int.from_bytes(digest) / _SCALE


def fires(probability: float | None, seed: int, scope: str, number: int, purpose: str) -> bool:
    """Whether a fault with this probability fires (unset: always; 0 never and 1 always, without a draw)."""
    if probability is None or probability >= 1:
        return True
    if probability <= 0:
        return False
    return chance(seed, scope, number, purpose) < probability


def new_seed() -> int:
    return secrets.randbelow(2**31)
