"""The recording world fixture, shared with the replay tests."""

from tests.record.world import world

__all__ = ["world"]
