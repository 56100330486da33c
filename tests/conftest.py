from collections.abc import Iterator

import pytest

from tests.conformance.server import LoopbackServer


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A fresh loopback server on 127.0.0.1 with an empty reply queue."""
    with LoopbackServer() as server:
        yield server
