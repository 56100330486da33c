"""The recording world fixture, shared with the record tests; mitmproxy imported as tests/mitm.py says,
for the in-process sessions."""

import tests.mitm  # noqa: F401
from tests.record.world import world

__all__ = ["world"]
